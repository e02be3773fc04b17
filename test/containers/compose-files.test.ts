import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { services as manifest, stackNames, stacks, type StackMember, type StackName } from '@sample-services/manifest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { parse } from 'yaml';
import { composeOutput, repoRoot } from './support/docker.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

interface ServiceSpec {
  /** Published host:container ports, always the same number on both sides. */
  ports: readonly number[];
  /** Runs one of our images: the node health probe and the app-logs volume. */
  ours: boolean;
}

/**
 * PostgreSQL (`db`), which compose adds to a stack (composeOnly): published on 5432 in the database stack
 * only, and there on loopback only.
 */
const databasePorts: Partial<Record<StackName, readonly number[]>> = { database: [5432] };

/** What each file must declare with no variables set (spec 4.5, 8), from the manifest; the stacks' tests override host ports. */
function expectedOf(stack: StackName): { volumes: string[]; services: Record<string, ServiceSpec>; commands: readonly string[] } {
  const members: readonly StackMember[] = stacks[stack].members;
  const composeOnly: readonly string[] = stacks[stack].composeOnly;
  const services: Record<string, ServiceSpec> = {};
  for (const m of members) services[m.as] = { ports: [manifest[m.service].port], ours: m.composeImage === undefined };
  for (const as of composeOnly) services[as] = { ports: databasePorts[stack] ?? [], ours: false };
  return { volumes: composeOnly.length > 0 ? ['app-logs', 'postgres-data'] : ['app-logs'], services, commands: stacks[stack].commands };
}

/** What `docker compose config --format json` renders of a file (Compose v2, normalised). */
interface Rendered {
  services: Record<string, RenderedService>;
  volumes?: Record<string, unknown>;
  networks?: Record<string, { driver?: string }>;
}
interface RenderedService {
  image?: string;
  command?: string[];
  environment?: Record<string, string | null>;
  networks?: Record<string, unknown>;
  restart?: string;
  ports?: { target: number; published?: string; host_ip?: string }[];
  logging?: { driver?: string; options?: Record<string, string> };
  healthcheck?: Record<string, unknown>;
  volumes?: { type: string; source?: string; target: string; read_only?: boolean }[];
  depends_on?: Record<string, { condition: string }>;
}

/** The health check of our images' probe (spec 8, group file), every second until the first pass. */
const webHealthcheck = {
  test: ['CMD', 'node', '/app/health-check.mjs'],
  interval: '30s',
  timeout: '10s',
  retries: 3,
  start_period: '30s',
  start_interval: '1s',
};
/** PostgreSQL's readiness check for the configured user and database (spec 8), every second while it initialises. */
const databaseHealthcheck = {
  test: ['CMD-SHELL', 'pg_isready -U "$$POSTGRES_USER" -d "$$POSTGRES_DB"'],
  interval: '10s',
  timeout: '5s',
  retries: 5,
  start_period: '1m0s',
  start_interval: '1s',
};

describe.skipIf(stage.skipReason !== undefined).each(stackNames)('deploy/compose/compose.%s.yml', (file) => {
  const expected = expectedOf(file);
  const members: readonly StackMember[] = stacks[file].members;
  // An empty env file: the files' own defaults, whatever .env lies next to them.
  let emptyEnv = '';
  beforeAll(async () => {
    emptyEnv = join(await mkdtemp(join(tmpdir(), 'compose-config-')), 'empty.env');
    await writeFile(emptyEnv, '');
  });
  afterAll(async () => {
    await rm(dirname(emptyEnv), { recursive: true, force: true });
  });
  const composeFile = join(repoRoot, 'deploy/compose', `compose.${file}.yml`);
  const config = async (): Promise<{ rendered: Rendered; warnings: string }> => {
    const { stdout, stderr } = await composeOutput(['--env-file', emptyEnv, '-f', composeFile, 'config', '--format', 'json']);
    return { rendered: JSON.parse(stdout) as Rendered, warnings: stderr };
  };

  it('declares format version 3.8, and Compose v2 warns of nothing else', async () => {
    const source = parse(await readFile(composeFile, 'utf8')) as { version?: unknown };
    expect(source.version).toBe('3.8');
    const { warnings } = await config();
    // v2 ignores the version line and says so: the one warning the file may cause.
    const lines = warnings.split('\n').filter(Boolean);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/the attribute `version` is obsolete/);
  });

  it('validates with docker compose config, with its named volumes and bridge networks', async () => {
    const { rendered } = await config();
    expect(Object.keys(rendered.services).sort()).toEqual([...Object.keys(expected.services), ...expected.commands].sort());
    expect(Object.keys(rendered.volumes ?? {}).sort()).toEqual(expected.volumes);
    expect(rendered.networks?.['app-network']?.driver).toBe('bridge');
    if (expected.services.db !== undefined) expect(rendered.networks?.['db-network']?.driver).toBe('bridge');
  });

  it.each(Object.entries(expected.services))(
    '%s: spec ports (PostgreSQL on loopback only), its networks, restart unless-stopped, health check, rotated output',
    async (service, spec) => {
      const rendered = (await config()).rendered.services[service];
      if (rendered === undefined) throw new Error(`no service ${service}`);
      // The spec's app-network for all but PostgreSQL, which is on db-network with those that use it.
      const networks = Object.keys(rendered.networks ?? {}).sort();
      const usesDb = rendered.environment?.DATABASE_URL !== undefined;
      expect(networks).toEqual(service === 'db' ? ['db-network'] : usesDb ? ['app-network', 'db-network'] : ['app-network']);
      expect(rendered.restart).toBe('unless-stopped');
      const published = (rendered.ports ?? []).map((p) => [Number(p.published), p.target]);
      expect(published).toEqual(spec.ports.map((port) => [port, port]));
      // Ours and nginx on every interface, as the spec publishes them; PostgreSQL never.
      expect((rendered.ports ?? []).map((p) => p.host_ip)).toEqual(spec.ports.map(() => (service === 'db' ? '127.0.0.1' : undefined)));
      // The daemon's default json-file keeps a container's output without end: every service bounds it.
      expect(rendered.logging?.driver).toMatch(/^(json-file|local)$/);
      if (rendered.logging?.driver === 'json-file')
        expect(rendered.logging.options).toMatchObject({
          'max-size': expect.stringMatching(/^\d+[kmg]$/) as unknown,
          'max-file': expect.stringMatching(/^\d+$/) as unknown,
        });
      if (spec.ours) {
        expect(rendered.healthcheck).toEqual(webHealthcheck);
        expect(rendered.volumes).toContainEqual(expect.objectContaining({ type: 'volume', source: 'app-logs', target: '/app/logs' }));
      }
      const member = members.find((m) => m.as === service);
      if (member === undefined) {
        // What compose adds: PostgreSQL.
        expect(rendered.image).toBe('postgres:15');
        expect(rendered.healthcheck).toEqual(databaseHealthcheck);
        expect(rendered.volumes).toContainEqual(
          expect.objectContaining({ type: 'volume', source: 'postgres-data', target: '/var/lib/postgresql/data' }),
        );
      } else if (member.composeImage !== undefined) {
        // nginx in place of the TypeScript proxy, with the repository's nginx.conf, read-only.
        expect(rendered.image).toBe(member.composeImage);
        expect(rendered.volumes).toContainEqual({
          type: 'bind',
          source: join(repoRoot, 'deploy/nginx/nginx.conf'),
          target: '/etc/nginx/nginx.conf',
          read_only: true,
          bind: { create_host_path: true },
        });
      }
    },
  );

  it('starts each member once the one before it is healthy (nginx: started), the first once PostgreSQL is and its commands ended well', async () => {
    const { rendered } = await config();
    members.forEach((member, i) => {
      const before = i === 0 ? stacks[file].composeOnly : [members[i - 1]?.as];
      // nginx resolves its upstream when it starts: it needs the container, not a passed probe.
      const condition = member.composeImage === undefined ? 'service_healthy' : 'service_started';
      const commands = i === 0 ? expected.commands.map((on) => [on, { condition: 'service_completed_successfully', required: true }]) : [];
      const dependsOn = rendered.services[member.as]?.depends_on;
      if (before.length === 0) expect(dependsOn).toBeUndefined();
      else expect(dependsOn).toEqual(Object.fromEntries([...before.map((on) => [on, { condition, required: true }]), ...commands]));
    });
  });

  it.runIf(expected.commands.length > 0).each(expected.commands)(
    "%s: node dist/ of that name from the first member's image once PostgreSQL is healthy, on db-network only, run once, no health check, no port",
    async (command) => {
      const rendered = (await config()).rendered.services[command];
      const first = (await config()).rendered.services[members[0]?.as ?? ''];
      expect(rendered?.image).toBe(first?.image);
      expect(rendered?.command).toEqual(['node', `dist/${command}.js`]);
      expect(rendered?.environment).toEqual(expect.objectContaining({ DATABASE_URL: first?.environment?.DATABASE_URL }));
      expect(Object.keys(rendered?.networks ?? {})).toEqual(['db-network']);
      expect(rendered?.restart).toBe('no');
      expect(rendered?.ports ?? []).toEqual([]);
      // Compose keeps node-service's settings beside it, and runs none of them.
      expect(rendered?.healthcheck).toMatchObject({ disable: true });
      expect(rendered?.depends_on).toEqual({ db: { condition: 'service_healthy', required: true } });
    },
  );
});
