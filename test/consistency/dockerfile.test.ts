import { serviceNames, services, type ServiceName } from '@sample-services/manifest';
import { describe, expect, it } from 'vitest';
import { readRepoFile } from './support/repo-files.js';

const dockerfile = readRepoFile('Dockerfile');
/** The default service, the one service the Dockerfile may name. */
const defaultLine = /^ARG SERVICE=(\S+)$/m;

/** Instructions only: comments dropped, continuation lines joined. */
const instructions = dockerfile
  .split('\n')
  .filter((line) => !line.trimStart().startsWith('#'))
  .join('\n')
  .replaceAll('\\\n', ' ');

/** The default service and its port, the one service and the one port the Dockerfile may name. */
const defaultPortLine = /^ARG PORT=(\d+)$/m;

describe('the Dockerfile reads the services from the manifest', () => {
  it('defaults SERVICE to a manifest service, and PORT to its port', () => {
    const service = defaultLine.exec(dockerfile)?.[1] as ServiceName | undefined;
    expect(serviceNames).toContain(service);
    expect(Number(defaultPortLine.exec(dockerfile)?.[1])).toBe(services[service ?? 'simple'].port);
  });

  it('names no service anywhere else, comments included', () => {
    const rest = dockerfile.replace(defaultLine, '');
    const named = serviceNames.filter((name) => new RegExp(`\\b${name}\\b`, 'i').test(rest));
    expect(named).toEqual([]);
  });

  it('exposes PORT, checked against the service, and writes no other port in an instruction', () => {
    expect(instructions).toMatch(/^EXPOSE \$PORT$/m);
    expect(instructions).toMatch(/\[ "\$port" = "\$PORT" \]/);
    const rest = instructions.replace(defaultPortLine, '');
    const ports = [...new Set(serviceNames.map((name) => services[name].port))];
    expect(ports.filter((port) => new RegExp(`\\b${port}\\b`).test(rest))).toEqual([]);
  });

  it('reads in two minutes: about 80 lines with its comments, and runs no script of ours but the health check', () => {
    expect(dockerfile.trimEnd().split('\n').length).toBeLessThanOrEqual(85);
    const copied = [...instructions.matchAll(/^COPY (?!--from)(?:--\S+ )*(.+) \S+$/gm)].flatMap((m) => (m[1] ?? '').split(' '));
    expect(copied.filter((source) => source.startsWith('deploy/'))).toEqual([
      'deploy/docker/health-check.mjs',
      'deploy/docker/health-check.mjs',
    ]);
    expect(instructions).not.toMatch(/npm sbom|node \/tmp\//);
  });
});

describe("what an image installs is its service's package.json tree", () => {
  interface Manifest {
    dependencies?: Record<string, string>;
    peerDependencies?: Record<string, string>;
    peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  }
  const manifestOf = (folder: string): Manifest => JSON.parse(readRepoFile(`${folder}/package.json`)) as Manifest;
  const kit = manifestOf('packages/kit');

  it('installs the production tree of the SERVICE and the preload, named by path as the services name their packages', () => {
    expect(instructions).toMatch(
      /RUN npm pkg delete workspaces devDependencies\s+&& npm pkg set "dependencies\.@sample-services\/\$SERVICE=file:services\/\$SERVICE" dependencies\.@sample-services\/telemetry=file:packages\/telemetry\s+&& npm install --omit=dev /,
    );
  });

  it('leaves npm, npx, corepack and yarn out of the runtime', () => {
    const runtime = instructions.slice(instructions.search(/^FROM \S+ AS runtime$/m));
    for (const path of [
      '/usr/local/lib/node_modules',
      '/usr/local/bin/npm',
      '/usr/local/bin/npx',
      '/usr/local/bin/corepack',
      '/usr/local/bin/yarn*',
    ])
      expect(runtime).toMatch(new RegExp(`^RUN rm -rf [^\\n]*${path.replaceAll('*', '\\*')}( |$)`, 'm'));
  });

  it('has the kit take what it loads only on request (the /docs page, readable logs) as optional peers', () => {
    for (const name of ['@fastify/swagger-ui', 'pino-pretty']) {
      expect(kit.dependencies ?? {}).not.toHaveProperty(name);
      expect(kit.peerDependencies ?? {}).toHaveProperty(name);
      expect(kit.peerDependenciesMeta?.[name]?.optional).toBe(true);
    }
  });

  it.each(serviceNames)('%s lists @fastify/swagger-ui exactly when it serves the API document, and never pino-pretty', (service) => {
    const { dependencies = {} } = manifestOf(`services/${service}`);
    const servesDocument = /\.register\(apiDocs\)/.test(readRepoFile(`services/${service}/src/app.ts`));
    expect('@fastify/swagger-ui' in dependencies).toBe(servesDocument);
    expect(dependencies).not.toHaveProperty('pino-pretty');
  });
});
