import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createPostgresStore } from '@sample-services/users/postgres-store';
import { createSqliteStore } from '@sample-services/users/sqlite-store';
import { SAMPLE_USERS } from '@sample-services/users/seed-command';
import type { UserStore } from '@sample-services/users/user-store';
import { afterAll, describe, expect, it } from 'vitest';
import { usePostgres } from '@sample-services/testing/postgres';

const postgres = await usePostgres();
const dataDir = mkdtempSync(join(tmpdir(), 'svc-seed-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `node dist/seed.js` of a service, as compose's seed profile runs it. */
function seed(service: 'database' | 'backend', env: NodeJS.ProcessEnv): { code: number | null; stdout: string; stderr: string } {
  const entry = join(import.meta.dirname, '../../services', service, 'dist/seed.js');
  const { status, stdout, stderr } = spawnSync(process.execPath, [entry], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
  return { code: status, stdout, stderr };
}

/** Every user's JSON as the list gives it. */
async function listed(store: UserStore): Promise<unknown[]> {
  try {
    return JSON.parse(`[${(await store.page(0, 1000)).json}]`) as unknown[];
  } finally {
    await store.close();
  }
}

describe('the seed command adds the sample users once, however often it runs', () => {
  const count = SAMPLE_USERS.length;

  it('on SQLite, beside a user already there whose e-mail is a sample one in capitals', async () => {
    const store = createSqliteStore(dataDir);
    const mine = await store.create({ name: 'Mine', email: SAMPLE_USERS[0]!.email.toUpperCase() });
    await store.close();
    const location = `SQLite file ${join(dataDir, 'app.db')}`;
    expect(seed('database', { DATA_DIR: dataDir })).toEqual({
      code: 0,
      stdout: `database: users stored in ${location}: ${count - 1} sample users added, 1 already there\n`,
      stderr: '',
    });
    const first = await listed(createSqliteStore(dataDir));
    expect(seed('backend', { DATA_DIR: dataDir })).toEqual({
      code: 0,
      stdout: `backend: users stored in ${location}: 0 sample users added, ${count} already there\n`,
      stderr: '',
    });
    expect(await listed(createSqliteStore(dataDir))).toEqual(first);
    expect(first).toEqual([mine, ...SAMPLE_USERS.slice(1).map((user) => expect.objectContaining(user) as unknown)]);
  });

  it.skipIf(postgres === undefined)('on PostgreSQL, starting from a database with no table yet', async () => {
    const url = await postgres!.createDatabase();
    try {
      expect(seed('database', { DATABASE_URL: url })).toMatchObject({
        code: 0,
        stdout: expect.stringContaining(`: ${count} sample users added, 0 already there\n`),
      });
      const first = await listed(createPostgresStore(url));
      expect(seed('database', { DATABASE_URL: url })).toMatchObject({
        code: 0,
        stdout: expect.stringContaining(`: 0 sample users added, ${count} already there\n`),
      });
      expect(await listed(createPostgresStore(url))).toEqual(first);
      expect(first).toEqual(SAMPLE_USERS.map((user) => expect.objectContaining(user) as unknown));
    } finally {
      await postgres!.destroy();
    }
  });
});
