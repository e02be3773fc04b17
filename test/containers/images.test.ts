import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serviceNames } from '@sample-services/manifest';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { docker, dockerResult, publishedUrl, repoRoot, timedStop, waitForHttp } from './support/docker.js';
import { attestationsIn, openAttestingEngine } from './support/attestations.js';
import { declares, imageOf, productionTreeOf, services } from './support/images.js';
import { runtimeOf } from './support/workspaces.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

interface ImageConfig {
  User: string;
  Env: string[];
  Cmd: string[];
  Entrypoint: string[] | null;
  WorkingDir: string;
  ExposedPorts?: Record<string, object> | null;
  Healthcheck: { Test: string[]; Interval: number; Timeout: number; StartPeriod: number; StartInterval: number; Retries: number };
}

const second = 1e9; // inspect reports durations in nanoseconds
const execFileAsync = promisify(execFile);

describe.skipIf(stage.skipReason !== undefined).each(services)('image of $service', ({ service, port }) => {
  const image = imageOf(service, stage.tag);
  const prefix = `sample-${stage.runId}-${service}`;
  const volumes = [`${prefix}-logs`, `${prefix}-data`];
  afterAll(async () => {
    await docker(['rm', '--force', '--volumes', prefix]).catch(() => undefined);
    await docker(['volume', 'rm', ...volumes]).catch(() => undefined);
  });

  it('runs node directly as the non-root node user, in production, with the spec health check', async () => {
    const config = JSON.parse(await docker(['image', 'inspect', '--format', '{{json .Config}}', image])) as ImageConfig;
    expect(config.User).toBe('node');
    expect(config.Entrypoint).toBeNull();
    expect(config.Cmd).toEqual(['node', '--import=@sample-services/telemetry', 'dist/main.js']);
    expect(config.Env).toContain(`OTEL_SERVICE_NAME=${service}`);
    expect(config.WorkingDir).toBe(`/app/services/${service}`);
    // EXPOSE documents the service's own port (src/service.ts, which the build checks); no PORT is set, so PORT still overrides it.
    expect(config.ExposedPorts).toEqual({ [`${port}/tcp`]: {} });
    expect(config.Env).toEqual(expect.arrayContaining(['NODE_ENV=production', 'LOG_DIR=/app/logs']));
    expect(config.Env.filter((e) => e.startsWith('PROBE_'))).toEqual([]);
    expect(config.Env.filter((e) => e.startsWith('PORT='))).toEqual([]);
    expect(config.Env.filter((e) => /PASSWORD|DATABASE_URL|SECRET|TOKEN/i.test(e))).toEqual([]);
    expect(config.Healthcheck).toEqual({
      Test: ['CMD', 'node', '/app/health-check.mjs'],
      Interval: 30 * second,
      Timeout: 3 * second,
      StartPeriod: 5 * second,
      StartInterval: 1 * second,
      Retries: 3,
    });
  });

  it('carries the OCI labels of its build: title, source, revision, version, created', async () => {
    const labels = JSON.parse(await docker(['image', 'inspect', '--format', '{{json .Config.Labels}}', image])) as Record<string, string>;
    const oci = (key: string): string | undefined => labels[`org.opencontainers.image.${key}`];
    const built = stage.provenance ?? {};
    expect(oci('title')).toBe(`sample-${service}`);
    // The commit checked out when the stage began (git rev-parse HEAD), the root package's version.
    expect(oci('revision')).toMatch(/^[0-9a-f]{40}$/);
    expect(oci('revision')).toBe(built.REVISION);
    expect(oci('version')).toBe((JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string }).version);
    expect(oci('created')).toBe(built.CREATED);
    expect(Date.now() - Date.parse(oci('created') ?? '')).toBeLessThan(3 * 3600_000);
    expect(oci('source')).toBe(built.SOURCE);
  });

  it('carries no package manager (npm, npx, corepack, yarn) and no SBOM of its own: BuildKit attests one', async () => {
    const found = JSON.parse(await docker(['run', '--rm', image, 'node', '-e', findPackageManagers])) as string[];
    expect(found).toEqual([]);
  });

  it('installs each package at the version package-lock.json holds for it (nothing resolved anew)', async () => {
    const { installed } = JSON.parse(await docker(['run', '--rm', image, 'node', '-e', listPackages])) as { installed: string[] };
    const locked = lockedVersions();
    expect(installed.length).toBeGreaterThan(10);
    expect(installed.filter((entry) => !locked.has(entry))).toEqual([]);
  });

  it('holds only production dependencies and compiled code (one-off run --rm leaves no container)', async () => {
    const name = `${prefix}-once`;
    const listing = await docker(['run', '--rm', '--name', name, image, 'node', '-e', listModules]);
    const { modules, files } = JSON.parse(listing) as { modules: string[]; files: string[] };
    // Not @types: @opentelemetry/instrumentation-pg itself depends on @types/pg (the preload's tree, checked exactly below).
    for (const devOnly of ['typescript', 'vitest', 'tsx', 'eslint']) expect(modules).not.toContain(devOnly);
    // The workspaces its package.json reaches and their packages; the database drivers only there.
    const runtime = runtimeOf(service);
    for (const driver of ['better-sqlite3', 'pg']) expect(modules.includes(driver)).toBe(runtime.packages.has(driver));
    expect(files).toContain(`/app/services/${service}/dist/main.js`);
    // Besides compiled code, only a store's migrations, the SQL files it applies at start.
    const migration = /^\/app\/packages\/[\w-]+\/migrations\/\w+\/\d{4}_\w+\.sql$/;
    expect(files.filter((f) => !f.endsWith('.js') && !f.endsWith('package.json') && !migration.test(f))).toEqual([]);
    // Every migration file of every workspace it holds, whatever its number: the Dockerfile copies the folders.
    const migrations = runtime.workspaces
      .filter((workspace) => existsSync(join(repoRoot, workspace, 'migrations')))
      .flatMap((workspace) =>
        readdirSync(join(repoRoot, workspace, 'migrations'), { recursive: true, encoding: 'utf8' })
          .filter((file) => file.endsWith('.sql'))
          .map((file) => `/app/${workspace}/migrations/${file}`),
      );
    expect(files.filter((f) => migration.test(f)).sort()).toEqual(migrations.sort());
    expect(migrations.length > 0).toBe(runtime.workspaces.includes('packages/users'));
    const workspaces = new Set(files.map((f) => f.split('/').slice(2, 4).join('/')));
    expect([...workspaces].sort()).toEqual(runtime.workspaces);
    // The service's own facts (src/service.ts), which it runs with and the health check reads its port from.
    const ownFacts = `const { service } = await import('/app/services/${service}/dist/service.js'); console.log(JSON.stringify({ name: service.name, port: service.port }));`;
    expect(JSON.parse(await docker(['run', '--rm', image, 'node', '--input-type=module', '-e', ownFacts]))).toEqual({
      name: service,
      port,
    });
    expect(await docker(['ps', '--all', '--quiet', '--filter', `name=${name}`])).toBe('');
  });

  it("holds exactly its package.json's production tree and the preload's: Swagger UI where it serves /docs, no pino-pretty", async () => {
    const { top, everywhere } = JSON.parse(await docker(['run', '--rm', image, 'node', '-e', listPackages])) as {
      top: string[];
      everywhere: string[];
    };
    // Printed for the record: what each image carries at its top level.
    console.log(`${service}: ${top.length} top-level packages: ${top.join(' ')}`);
    const expected = productionTreeOf(service);
    const workspaceNames = expected.workspaces.map((folder) => `@sample-services/${folder.split('/')[1]}`).sort();
    expect(top.filter((name) => name.startsWith('@sample-services/'))).toEqual(workspaceNames);
    // Every package the tree reaches is installed (top level or nested), and nothing else.
    expect(everywhere.filter((name) => !name.startsWith('@sample-services/'))).toEqual(expected.packages);
    expect(top.includes('@fastify/swagger-ui')).toBe(declares(service, '@fastify/swagger-ui'));
    expect(everywhere).not.toContain('pino-pretty');
    // With an endpoint set, the preload loads the SDK and its instrumentations, all installed.
    const load = `import('@sample-services/telemetry').then(() => console.log('loaded'))`;
    const traced = ['-e', 'OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:9'];
    expect(await docker(['run', '--rm', ...traced, image, 'node', '--input-type=module', '-e', load])).toBe('loaded');
  });

  it('refuses LOG_FORMAT=pretty in one line: pino-pretty is for development, not in the image', async () => {
    const { code, output } = await dockerResult(['run', '--rm', '-e', 'LOG_FORMAT=pretty', image]);
    expect(code).toBe(1);
    expect(output).toBe(
      `${service}: invalid configuration: LOG_FORMAT=pretty needs pino-pretty, a development dependency not installed here; use LOG_FORMAT=json or auto\n`,
    );
  });

  it('serves under --read-only --cap-drop=ALL --user 1000:1000 -m 512m --cpus=1 with its volumes, and stops at once', async () => {
    for (const volume of volumes) await docker(['volume', 'create', volume]);
    // The proxy forwards everything, /health included: alone, it answers 502 from a closed upstream.
    const env = service === 'proxy' ? ['-e', 'UPSTREAM_URL=http://127.0.0.1:9'] : [];
    await docker([
      'run', '-d', '--name', prefix, '-p', `127.0.0.1:0:${port}`,
      '-v', `${volumes[0]}:/app/logs`, '-v', `${volumes[1]}:/app/data`, ...env,
      '--read-only', '--cap-drop=ALL', '--user', '1000:1000', '-m', '512m', '--cpus=1', image,
    ]); // prettier-ignore
    const baseUrl = await publishedUrl(prefix, port);
    await waitForHttp(baseUrl, 30_000, service === 'proxy' ? 502 : 200);
    // The page's files come from @fastify/swagger-ui, which the services that serve /docs declare.
    if (declares(service, '@fastify/swagger-ui')) {
      const css = await fetch(`${baseUrl}/docs/static/swagger-ui.css`);
      expect([css.status, css.headers.get('content-type')]).toEqual([200, 'text/css; charset=utf-8']);
      await css.arrayBuffer();
    }
    const pid1 = await docker(['exec', prefix, 'cat', '/proc/1/cmdline']);
    expect(pid1.split('\0').filter(Boolean)).toEqual(['node', '--import=@sample-services/telemetry', 'dist/main.js']);
    expect(await docker(['exec', prefix, 'ls', '/app/logs'])).toContain(`${service}.log`);
    const stopMs = await timedStop(prefix);
    expect(stopMs).toBeLessThan(2_000);
    expect(await docker(['inspect', '--format', '{{.State.ExitCode}}', prefix])).toBe('0');
    console.log(`${image}: docker stop took ${stopMs.toFixed(0)} ms`);
  });
});

describe.skipIf(stage.skipReason !== undefined)('the image build', () => {
  it('refuses an unknown SERVICE in one line that lists the services (the folders under services/)', async () => {
    const { code, output } = await dockerResult(['build', '--pull=false', '--force-rm', '--build-arg', 'SERVICE=nope', repoRoot]);
    expect(code).not.toBe(0);
    expect(output).toContain(`unknown SERVICE=nope; one of ${[...serviceNames].sort().join(', ')}\n`);
  });

  it('attests an SBOM of the runtime and the provenance through BuildKit (buildx build --sbom=true --provenance=mode=max)', async () => {
    // The smallest tree; a build with nothing cached, on an engine of its own (support/attestations.ts says why).
    const { service, port } = services.find((s) => s.service === 'proxy') ?? { service: 'proxy', port: 0 };
    const engine = await openAttestingEngine(stage);
    const dir = await mkdtemp(join(tmpdir(), `sample-${stage.runId}-attest-`));
    try {
      const started = performance.now();
      const output = `type=oci,dest=${join(dir, 'image.tar')}`;
      await docker(
        ['buildx', 'build', '--pull=false', '--sbom=true', '--provenance=mode=max', '--build-arg', `SERVICE=${service}`, '--build-arg', `PORT=${port}`, '--output', output, repoRoot],
        { env: { DOCKER_HOST: engine.socket }, timeoutMs: 1_200_000 },
      ); // prettier-ignore
      console.log(`${service}: built with its attestations in ${((performance.now() - started) / 1000).toFixed(1)} s`);
      await mkdir(join(dir, 'layout'));
      await execFileAsync('tar', ['-xf', join(dir, 'image.tar'), '-C', join(dir, 'layout')]);
      const statements = await attestationsIn(join(dir, 'layout'));
      // The SBOM is of the runtime's file system: the service's production tree at the lockfile's versions, no build tool.
      const { packages } = statements.get('https://spdx.dev/Document')?.predicate as { packages: { name: string; versionInfo: string }[] };
      expect([...new Set(packages.map((p) => p.name))].sort()).toEqual(productionTreeOf(service).packages);
      const locked = lockedVersions();
      expect(packages.map((p) => `${p.name}@${p.versionInfo}`).filter((entry) => !locked.has(entry))).toEqual([]);
      // Provenance in max mode records the build's arguments among its parameters.
      const provenance = [...statements.values()].find((st) => st.predicateType.startsWith('https://slsa.dev/provenance/'));
      expect(JSON.stringify(provenance?.predicate)).toContain(`"build-arg:SERVICE":"${service}"`);
    } finally {
      await engine.remove();
      await rm(dir, { recursive: true, force: true });
    }
  }, 1_500_000);

  it("refuses a PORT that is not the service's own, naming the right one", async () => {
    const args = ['build', '--pull=false', '--force-rm', '--build-arg', 'SERVICE=proxy', '--build-arg', 'PORT=3000', repoRoot];
    const { code, output } = await dockerResult(args, { timeoutMs: 600_000 });
    expect(code).not.toBe(0);
    const own = services.find((s) => s.service === 'proxy')?.port;
    expect(output).toContain(`SERVICE=proxy listens on ${own} (its src/service.ts): build with --build-arg PORT=${own}\n`);
  }, 600_000);
});

/**
 * Runs inside the image, over /app/node_modules (nested folders too) and the workspaces' own node_modules:
 * the package names at the top of /app/node_modules (scoped ones by their full name), every package name
 * installed anywhere, and every package installed from the registry as name@version (the workspaces'
 * links left out); each sorted, each entry once.
 */
const listPackages = `
const { existsSync, lstatSync, readdirSync, readFileSync } = require('node:fs');
const top = (d) => readdirSync(d).filter((n) => !n.startsWith('.')).flatMap((n) => n.startsWith('@') ? readdirSync(d + '/' + n).map((s) => n + '/' + s) : [n]);
const names = new Set();
const installed = new Set();
const walk = (d) => {
  for (const n of top(d)) {
    names.add(n);
    const path = d + '/' + n;
    if (lstatSync(path).isSymbolicLink()) continue;
    const { name, version } = JSON.parse(readFileSync(path + '/package.json', 'utf8'));
    installed.add(name + '@' + version);
    if (existsSync(path + '/node_modules')) walk(path + '/node_modules');
  }
};
walk('/app/node_modules');
for (const ws of ['packages', 'services']) for (const n of readdirSync('/app/' + ws)) if (existsSync('/app/' + ws + '/' + n + '/node_modules')) walk('/app/' + ws + '/' + n + '/node_modules');
console.log(JSON.stringify({ top: top('/app/node_modules').sort(), everywhere: [...names].sort(), installed: [...installed].sort() }));
`;

/** Runs inside the image: any package manager on PATH or in the base image's global folder, and an SBOM file of old. */
const findPackageManagers = `
const { existsSync } = require('node:fs');
const onPath = process.env.PATH.split(':').flatMap((dir) => ['npm', 'npx', 'corepack', 'yarn', 'yarnpkg', 'pnpm'].map((name) => dir + '/' + name));
console.log(JSON.stringify([...onPath, '/usr/local/lib/node_modules/npm', '/usr/local/lib/node_modules/corepack', '/app/sbom.cdx.json'].filter((p) => existsSync(p))));
`;

/** Every name@version package-lock.json installs from the registry, at any path. */
function lockedVersions(): Set<string> {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { version?: string; link?: boolean }>;
  };
  return new Set(
    Object.entries(lock.packages)
      .filter(([path, entry]) => path.includes('node_modules/') && entry.link !== true)
      .map(([path, entry]) => `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${entry.version}`),
  );
}

/** Runs inside the image: top-level packages in node_modules and every file of the app's code. */
const listModules = `
const { readdirSync, readFileSync } = require('node:fs');
const top = (d) => readdirSync(d).filter((n) => !n.startsWith('.')).flatMap((n) => n.startsWith('@') ? [n, ...readdirSync(d + '/' + n).map((s) => n + '/' + s)] : [n]);
const walk = (d) => readdirSync(d, { withFileTypes: true }).flatMap((e) => e.isDirectory() ? (e.name === 'node_modules' ? [] : walk(d + '/' + e.name)) : [d + '/' + e.name]);
console.log(JSON.stringify({ modules: top('/app/node_modules'), files: [...walk('/app/packages'), ...walk('/app/services')] }));
`;
