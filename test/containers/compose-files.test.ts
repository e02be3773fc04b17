import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { compose, repoRoot } from './support/docker.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

interface ServiceSpec {
  /** Published host:container ports, always the same number on both sides. */
  ports: readonly number[];
  /** A web service: the node health probe and the app-logs volume. */
  web: boolean;
}

/** What each file must declare with no variables set (spec 4.5, 8); the stacks' tests override host ports. */
const files: Record<string, { volumes: readonly string[]; services: Record<string, ServiceSpec> }> = {
  simple: { volumes: ['app-logs'], services: { proxy: { ports: [80], web: false }, web: { ports: [3000], web: true } } },
  database: { volumes: ['app-logs', 'postgres-data'], services: { db: { ports: [5432], web: false }, web: { ports: [5000], web: true } } },
  'two-tier': {
    volumes: ['app-logs', 'postgres-data'],
    services: { backend: { ports: [5000], web: true }, db: { ports: [], web: false }, frontend: { ports: [3000], web: true } },
  },
};

/** One service's block of the normalized `config` output (keys sorted, two-space indents). */
function block(config: string, service: string): string {
  const start = config.indexOf(`\n  ${service}:\n`, config.indexOf('\nservices:\n'));
  if (start < 0) throw new Error(`no service ${service} in:\n${config}`);
  const end = config.slice(start + 1).search(/\n(?: {2})?\S/);
  return config.slice(start, start + end + 2); // through the newline that ends the block
}

describe.skipIf(stage.skipReason !== undefined).each(Object.entries(files))('deploy/compose/%s.yml', (file, expected) => {
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
    expect((await config('--services')).split('\n').sort()).toEqual(Object.keys(expected.services));
    expect((await config('--volumes')).split('\n').sort()).toEqual(expected.volumes);
    expect(normalized).toContain('networks:\n  app-network:\n    driver: bridge\n');
  });

  it.each(Object.entries(expected.services))('%s: spec ports, app-network, restart unless-stopped, health check', async (service, spec) => {
    const text = block(await config(), service);
    expect(text).toContain('    networks:\n      app-network: null\n');
    expect(text).toContain('    restart: unless-stopped\n');
    const published = [...text.matchAll(/- published: (\d+)\n {6}target: (\d+)/g)].map((m) => [Number(m[1]), Number(m[2])]);
    expect(published).toEqual(spec.ports.map((port) => [port, port]));
    if (spec.web) {
      expect(text).toMatch(
        /healthcheck:\n {6}interval: 30s\n {6}retries: 3\n {6}start_period: 5s\n {6}test:\n {6}- CMD\n {6}- node\n {6}- \/app\/health-probe.mjs\n {6}timeout: 10s\n/,
      );
      expect(text).toContain('    - app-logs:/app/logs:rw\n');
    }
    if (service === 'db') {
      expect(text).toContain('    image: postgres:15\n');
      expect(text).toMatch(
        /healthcheck:\n {6}interval: 10s\n {6}retries: 5\n {6}test:\n {6}- CMD-SHELL\n {6}- pg_isready -U "\$\$POSTGRES_USER" -d "\$\$POSTGRES_DB"\n {6}timeout: 5s\n/,
      );
      expect(text).toContain('    - postgres-data:/var/lib/postgresql/data:rw\n');
    }
    if (service === 'proxy') {
      expect(text).toContain('    image: nginx:1.22\n');
      expect(text).toContain(`    - ${join(repoRoot, 'deploy/nginx/nginx.conf')}:/etc/nginx/nginx.conf:ro\n`);
      expect(text).toContain('    depends_on:\n      web:\n        condition: service_started\n');
    }
  });

  it('starts each service after what it depends on is healthy', async () => {
    const normalized = await config();
    const healthyDependency = (service: string, on: string): boolean =>
      block(normalized, service).includes(`    depends_on:\n      ${on}:\n        condition: service_healthy\n`);
    if (file === 'database') expect(healthyDependency('web', 'db')).toBe(true);
    if (file === 'two-tier') expect([healthyDependency('backend', 'db'), healthyDependency('frontend', 'backend')]).toEqual([true, true]);
    if (file === 'simple') expect(block(normalized, 'web')).not.toContain('depends_on');
  });
});
