import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { services, startedLine } from '@sample-services/manifest';
import { DEVELOPMENT_PASSWORD_WARNING } from '@sample-services/users/start-store';
import { SAMPLE_USERS } from '@sample-services/users/seed-command';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { commonContract } from '@sample-services/testing/contract/common';
import { databaseContract } from '@sample-services/testing/contract/database';
import { fetchUserList, uniqueEmail } from '@sample-services/testing/contract/users';
import { listAllUsers, missingAcknowledged, startWriteLoad } from '@sample-services/testing/write-load';
import { countListedUsers } from '@sample-services/testing/many-users';
import { composeOutput, docker, repoRoot, waitForHttp } from './support/docker.js';
import { expectHardenedService, networksOf } from './support/hardening.js';
import { healthyWithinMs, leftovers, openStack, startAndHealthy, type Stack } from './support/stack.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

describe.skipIf(stage.skipReason !== undefined)('database stack (deploy/compose/compose.database.yml)', () => {
  let stack: Stack;
  let url = '';
  const startStack = async (): Promise<void> => {
    await stack.upAndWait();
    url = await stack.url('web');
    await waitForHttp(url);
  };
  beforeAll(async () => {
    stack = await openStack('database', stage);
  });
  afterAll(async () => {
    await stack.remove();
  });

  it('up -d --wait starts variant B only once PostgreSQL is healthy, web within its start period', async () => {
    await startStack();
    const db = await startAndHealthy(await stack.container('db'));
    const web = await startAndHealthy(await stack.container('web'));
    expect(db.firstHealthy).toBeDefined();
    expect(web.started).toBeGreaterThanOrEqual(db.firstHealthy ?? Infinity);
    expect((web.firstHealthy ?? Infinity) - web.started).toBeLessThan(healthyWithinMs);
    expect(await stack.url('db', 5432)).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);
  });

  it('runs migrate (node dist/migrate.js of the same image) to its successful end before web starts', async () => {
    const migrate = (await stack.run(['ps', '--all', '-q', 'migrate'])).split('\n')[0] ?? '';
    const state = JSON.parse(await docker(['inspect', '--format', '{{json .State}}', migrate])) as {
      Status: string;
      ExitCode: number;
      FinishedAt: string;
    };
    expect(state).toMatchObject({ Status: 'exited', ExitCode: 0 });
    const web = await startAndHealthy(await stack.container('web'));
    expect(web.started).toBeGreaterThanOrEqual(Date.parse(state.FinishedAt));
    const migrations = 'migrations applied: 0001_users, 0002_email_key';
    expect(await stack.run(['logs', '--no-color', 'migrate'])).toContain(
      `database: users stored in PostgreSQL at db:5432/flaskapp: ${migrations}`,
    );
    // web found nothing left to apply.
    expect(await stack.run(['logs', '--no-color', 'web'])).not.toContain('migrations applied');
  });

  it('runs seed on request (its profile): the sample users once, however often it runs', async () => {
    const seed = (): Promise<string> => stack.run(['run', '--rm', '-T', 'seed']);
    const where = 'database: users stored in PostgreSQL at db:5432/flaskapp';
    expect(await seed()).toContain(`${where}: ${SAMPLE_USERS.length} sample users added, 0 already there`);
    const { users } = await fetchUserList(url);
    expect(await seed()).toContain(`${where}: 0 sample users added, ${SAMPLE_USERS.length} already there`);
    expect((await fetchUserList(url)).users).toEqual(users);
  });

  describe('variant B on its published port', () => {
    databaseContract(() => url);
    commonContract(() => url);
  });

  it('takes the password from a secret file: in no inspect output, image or log', async () => {
    for (const service of ['web', 'db']) {
      const inspected = await docker(['inspect', await stack.container(service)]);
      expect(inspected, service).not.toContain(stack.password);
      expect(inspected, service).toContain('/run/secrets/db-password');
      const image = await docker(['inspect', '--format', '{{.Config.Image}}', await stack.container(service)]);
      expect(await docker(['image', 'inspect', image]), `${service} image`).not.toContain(stack.password);
    }
    const env = await docker(['inspect', '--format', '{{json .Config.Env}}', await stack.container('web')]);
    expect(env).toContain('DATABASE_URL=postgresql://tester@db:5432/flaskapp');
    expect(env).toContain('FLASK_ENV=production');
    // Both read the same file, so the service connected with it (the contract above stored users).
    expect(await stack.run(['logs', '--no-color'])).not.toContain(stack.password);
  });

  it('runs web hardened, and PostgreSQL on a network shared only with web', async () => {
    const web = await stack.container('web');
    await expectHardenedService(web);
    expect(await networksOf(web, stack.project)).toEqual(['app-network', 'db-network']);
    expect(await networksOf(await stack.container('db'), stack.project)).toEqual(['db-network']);
  });

  it('exec db runs psql against the configured user and database', async () => {
    const count = await stack.run(['exec', '-T', 'db', 'psql', '-U', 'tester', '-d', 'flaskapp', '-tAc', 'SELECT count(*) FROM users']);
    expect(Number(count)).toBeGreaterThan(0);
  });

  it('keeps the data in postgres-data across down and up', async () => {
    const email = uniqueEmail('survivor');
    const created = await fetch(`${url}/api/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Survivor', email }),
    });
    expect(created.status).toBe(201);
    await stack.run(['down']);
    expect(await leftovers(stack.project)).toEqual(expect.arrayContaining([`${stack.project}_postgres-data`]));
    await startStack();
    expect((await fetchUserList(url)).users.map((u) => u.email)).toContain(email);
  });

  it('logs web shows the start-up line', async () => {
    expect(await stack.run(['logs', '--no-color', 'web'])).toContain(`"msg":"${startedLine('database', services.database.port)}"`);
  });

  it('keeps every user it answered 201 when web is killed (SIGKILL) in the middle of a create load', async () => {
    const web = await stack.container('web');
    const load = startWriteLoad([url], 16);
    try {
      await expect.poll(() => load.acknowledged.length, { timeout: 60_000, interval: 20 }).toBeGreaterThanOrEqual(1_000);
      await docker(['kill', '--signal', 'KILL', web]);
    } finally {
      await load.stop();
    }
    await startStack();
    const missing = missingAcknowledged(load.acknowledged, await listAllUsers(url));
    console.log(`database stack kill -9: ${load.acknowledged.length} creates answered 201, ${missing.length} missing after the restart`);
    expect(missing).toEqual([]);
    // Requests cut by the kill are reset or refused (TypeError) or never answered (TimeoutError); none gets an error answer.
    expect(Object.keys(load.failures).filter((failure) => failure !== 'TypeError' && failure !== 'TimeoutError')).toEqual([]);
  }, 120_000);

  it('lists a million users from a web container held to 512 MB: all of them, no OOM kill, no restart', async () => {
    const web = await stack.container('web');
    await docker(['update', '--memory', '512m', '--memory-swap', '512m', web]);
    const psql = (sql: string): Promise<string> =>
      stack.run(['exec', '-T', 'db', 'psql', '-U', 'tester', '-d', 'flaskapp', '-tAc', sql], 120_000);
    await psql(`INSERT INTO users (name, email) SELECT 'Bulk ' || i, 'bulk' || i || '@example.com' FROM generate_series(1, 1000000) i`);
    const total = Number(await psql('SELECT count(*) FROM users'));
    expect(total).toBeGreaterThan(1_000_000);
    const listed = await countListedUsers(`${url}/api/users`);
    expect(listed).toMatchObject({ status: 200, users: total, complete: true });
    const state = (await docker(['inspect', '--format', '{{.State.OOMKilled}} {{.RestartCount}} {{.HostConfig.Memory}}', web])).toString();
    expect(state.trim()).toBe(`false 0 ${512 * 1024 * 1024}`);
    const peak = await docker([
      'exec',
      web,
      'sh',
      '-c',
      'cat /sys/fs/cgroup/memory.peak || cat /sys/fs/cgroup/memory/memory.max_usage_in_bytes',
    ]).catch(() => undefined);
    console.log(
      `database stack: ${total} users, ${(listed.bytes / 1e6).toFixed(0)} MB listed; web container memory peak ${peak === undefined ? 'not readable' : `${(Number(peak.toString()) / 2 ** 20).toFixed(0)} MiB`}`,
    );
  }, 180_000);

  it('down -v removes the containers, the network and both volumes', async () => {
    await stack.run(['down', '-v']);
    expect(await leftovers(stack.project)).toEqual([]);
  });

  it('started without DB_PASSWORD_FILE (dev-db-password), web warns in its log that the password is the development one', async () => {
    // This run's settings but the password file: the stack's own default, on fresh volumes.
    const dir = await mkdtemp(join(tmpdir(), `${stack.project}-dev-`));
    const envFile = join(dir, 'dev.env');
    await writeFile(envFile, [`TAG=${stage.tag}`, 'POSTGRES_USER=tester', 'WEB_PORT=127.0.0.1:0', 'DB_PORT=127.0.0.1:0', ''].join('\n'));
    const compose = async (args: string[]): Promise<string> =>
      (
        await composeOutput(
          ['--env-file', envFile, '-p', stack.project, '-f', join(repoRoot, 'deploy/compose/compose.database.yml'), ...args],
          {
            timeoutMs: 180_000,
          },
        )
      ).stdout;
    try {
      await compose(['up', '-d', '--wait']);
      const lines = (await compose(['logs', '--no-color', '--no-log-prefix', 'web']))
        .split('\n')
        // Compose may start a line with a terminal control sequence, even with --no-color.
        .filter((l) => l.includes('{'))
        .map((l) => JSON.parse(l.slice(l.indexOf('{'))) as { level: number; msg: string });
      expect(lines.filter((l) => l.msg === DEVELOPMENT_PASSWORD_WARNING).map((l) => l.level)).toEqual([40]);
    } finally {
      await compose(['down', '-v']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    }
  }, 240_000);
});
