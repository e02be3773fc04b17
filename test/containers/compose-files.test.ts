import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { services as manifest, stackNames, stacks, type StackMember, type StackName } from '@svc/manifest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { compose, repoRoot } from './support/docker.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

interface ServiceSpec {
  /** Published host:container ports, always the same number on both sides. */
  ports: readonly number[];
  /** Runs one of our images: the node health probe and the app-logs volume. */
  ours: boolean;
}

/** PostgreSQL (`db`), which compose adds to a stack (composeOnly): published on 5432 in the database stack only. */
const databasePorts: Partial<Record<StackName, readonly number[]>> = { database: [5432] };

/** What each file must declare with no variables set (spec 4.5, 8), from the manifest; the stacks' tests override host ports. */
function expectedOf(stack: StackName): { volumes: string[]; services: Record<string, ServiceSpec> } {
  const members: readonly StackMember[] = stacks[stack].members;
  const composeOnly: readonly string[] = stacks[stack].composeOnly;
  const services: Record<string, ServiceSpec> = {};
  for (const m of members) services[m.as] = { ports: [manifest[m.service].port], ours: m.composeImage === undefined };
  for (const as of composeOnly) services[as] = { ports: databasePorts[stack] ?? [], ours: false };
  return { volumes: composeOnly.length > 0 ? ['app-logs', 'postgres-data'] : ['app-logs'], services };
}

/** One service's block of the normalized `config` output (keys sorted, two-space indents). */
function block(config: string, service: string): string {
  const start = config.indexOf(`\n  ${service}:\n`, config.indexOf('\nservices:\n'));
  if (start < 0) throw new Error(`no service ${service} in:\n${config}`);
  const end = config.slice(start + 1).search(/\n(?: {2})?\S/);
  return config.slice(start, start + end + 2); // through the newline that ends the block
}

describe.skipIf(stage.skipReason !== undefined).each(stackNames)('deploy/compose/%s.yml', (file) => {
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
  const config = (...args: string[]): Promise<string> =>
    compose(['--env-file', emptyEnv, '-f', join(repoRoot, 'deploy/compose', `${file}.yml`), 'config', ...args]);

  it('validates with docker-compose config, as format version 3.8 with its named volumes', async () => {
    const normalized = await config();
    expect(normalized).toMatch(/\nversion: '3.8'\n/);
    expect((await config('--services')).split('\n').sort()).toEqual(Object.keys(expected.services).sort());
    expect((await config('--volumes')).split('\n').sort()).toEqual(expected.volumes);
    expect(normalized).toContain('networks:\n  app-network:\n    driver: bridge\n');
    if (expected.services.db !== undefined) expect(normalized).toContain('  db-network:\n    driver: bridge\n');
  });

  it.each(Object.entries(expected.services))(
    '%s: spec ports, its networks, restart unless-stopped, health check',
    async (service, spec) => {
      const text = block(await config(), service);
      // The spec's app-network for all but PostgreSQL, which is on db-network with those that use it.
      const networks = [...(/ {4}networks:\n((?: {6}\S+: null\n)+)/.exec(text)?.[1] ?? '').matchAll(/(\S+): null/g)].map((m) => m[1]);
      const usesDb = /DATABASE_URL: /.test(text);
      expect(networks).toEqual(service === 'db' ? ['db-network'] : usesDb ? ['app-network', 'db-network'] : ['app-network']);
      expect(text).toContain('    restart: unless-stopped\n');
      const published = [...text.matchAll(/- published: (\d+)\n {6}target: (\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
      expect(published).toEqual(spec.ports.map((port) => [port, port]));
      if (spec.ours) {
        expect(text).toMatch(
          /healthcheck:\n {6}interval: 30s\n {6}retries: 3\n {6}start_period: 5s\n {6}test:\n {6}- CMD\n {6}- node\n {6}- \/app\/health-probe.mjs\n {6}timeout: 10s\n/,
        );
        expect(text).toContain('    - app-logs:/app/logs:rw\n');
      }
      const member = members.find((m) => m.as === service);
      if (member === undefined) {
        // What compose adds: PostgreSQL.
        expect(text).toContain('    image: postgres:15\n');
        expect(text).toMatch(
          /healthcheck:\n {6}interval: 10s\n {6}retries: 5\n {6}test:\n {6}- CMD-SHELL\n {6}- pg_isready -U "\$\$POSTGRES_USER" -d "\$\$POSTGRES_DB"\n {6}timeout: 5s\n/,
        );
        expect(text).toContain('    - postgres-data:/var/lib/postgresql/data:rw\n');
      } else if (member.composeImage !== undefined) {
        // nginx in place of the TypeScript proxy, with the repository's nginx.conf.
        expect(text).toContain(`    image: ${member.composeImage}\n`);
        expect(text).toContain(`    - ${join(repoRoot, 'deploy/nginx/nginx.conf')}:/etc/nginx/nginx.conf:ro\n`);
      }
    },
  );

  it('starts each member once the one before it is healthy (nginx: started), the first once PostgreSQL is', async () => {
    const normalized = await config();
    members.forEach((member, i) => {
      const before = i === 0 ? stacks[file].composeOnly : [members[i - 1]?.as];
      // nginx resolves its upstream when it starts: it needs the container, not a passed probe.
      const condition = member.composeImage === undefined ? 'service_healthy' : 'service_started';
      const dependsOn = before.map((on) => `      ${on}:\n        condition: ${condition}\n`).join('');
      if (before.length === 0) expect(block(normalized, member.as)).not.toContain('depends_on');
      else expect(block(normalized, member.as)).toContain(`    depends_on:\n${dependsOn}`);
    });
  });
});
