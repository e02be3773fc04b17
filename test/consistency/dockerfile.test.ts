import { serviceNames, services } from '@svc/manifest';
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

describe('the Dockerfile reads the services from the manifest', () => {
  it('defaults SERVICE to a manifest service', () => {
    expect(serviceNames).toContain(defaultLine.exec(dockerfile)?.[1]);
  });

  it('names no service anywhere else, comments included', () => {
    const rest = dockerfile.replace(defaultLine, '');
    const named = serviceNames.filter((name) => new RegExp(`\\b${name}\\b`, 'i').test(rest));
    expect(named).toEqual([]);
  });

  it('has no PORT build argument and no port of the manifest in an instruction (no EXPOSE 3000, no PORT=5000)', () => {
    expect(instructions).not.toMatch(/^\s*ARG\s+PORT\b|\$\{?PORT\b/m);
    const ports = [...new Set(serviceNames.map((name) => services[name].port))];
    expect(ports.filter((port) => new RegExp(`\\b${port}\\b`).test(instructions))).toEqual([]);
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

  it("installs the production dependencies of the SERVICE's workspace and the preload's, then removes what their trees do not reach", () => {
    expect(instructions).toMatch(
      /RUN npm ci --omit=dev --ignore-scripts "--workspace=services\/\$\{SERVICE\}" --workspace=packages\/telemetry\s+&& node \/tmp\/prune-tree\.mjs "\$\{SERVICE\}" packages\/telemetry/,
    );
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
