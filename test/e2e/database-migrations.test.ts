import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { usePostgres } from '@sample-services/testing/postgres';
import { runServiceToExit, startService, type ServiceProcess } from '@sample-services/testing/service-process';
import { beforeMigrations, collidingUsers, collisionMessage } from '../../packages/users/test/migration-dirs.js';

const postgres = await usePostgres();
const dataDir = mkdtempSync(join(tmpdir(), 'svc-b-migrations-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Three processes of variant B started at once on one database; each must start. */
async function startThree(env: NodeJS.ProcessEnv): Promise<ServiceProcess[]> {
  const started = await Promise.allSettled(Array.from({ length: 3 }, () => startService('database', env)));
  const services = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  if (services.length < 3) {
    await Promise.all(services.map((service) => service.stop()));
    throw (started.find((result) => result.status === 'rejected') as PromiseRejectedResult).reason;
  }
  return services;
}

/** Every migration of the store: the records must name each. Those after 0001 fail when run twice (a column or index added again). */
const migrations = (dialect: string): string[] =>
  readdirSync(join(import.meta.dirname, '../../packages/users/migrations', dialect)).map((file) => file.slice(0, -'.sql'.length));

describe('variant B: three processes starting at once apply each migration exactly once', () => {
  it('on one SQLite file', async () => {
    const services = await startThree({ DATA_DIR: dataDir });
    await Promise.all(services.map((service) => service.stop()));
    const db = new Database(join(dataDir, 'app.db'), { readonly: true });
    try {
      const names = db.prepare<[], string>('SELECT name FROM schema_migrations ORDER BY version').pluck().all();
      expect(names).toEqual(migrations('sqlite'));
    } finally {
      db.close();
    }
  });

  it.skipIf(postgres === undefined)('on one PostgreSQL database', async () => {
    const url = await postgres!.createDatabase();
    const services = await startThree({ DATABASE_URL: url });
    await Promise.all(services.map((service) => service.stop()));
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    try {
      const names = (await client.query<{ name: string }>('SELECT name FROM schema_migrations ORDER BY version')).rows.map(
        (row) => row.name,
      );
      expect(names).toEqual(migrations('postgres'));
    } finally {
      await client.end();
    }
  });
});

/** `node dist/migrate.js` of a service, as compose's migrate service runs it: its exit code and output. */
function migrate(service: 'database' | 'backend', env: NodeJS.ProcessEnv): { code: number | null; stdout: string; stderr: string } {
  const entry = join(import.meta.dirname, '../../services', service, 'dist/migrate.js');
  const { status, stdout, stderr } = spawnSync(process.execPath, [entry], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
  return { code: status, stdout, stderr };
}

describe('the migrate command', () => {
  it('applies the pending migrations of a new SQLite file, then finds none pending', () => {
    const dir = join(dataDir, 'command');
    const file = join(dir, 'app.db');
    const applied = `migrations applied: ${migrations('sqlite').join(', ')}`;
    expect(migrate('database', { DATA_DIR: dir })).toEqual({
      code: 0,
      stdout: `database: users stored in SQLite file ${file}: ${applied}\n`,
      stderr: '',
    });
    expect(migrate('backend', { DATA_DIR: dir })).toEqual({
      code: 0,
      stdout: `backend: users stored in SQLite file ${file}: no migration pending\n`,
      stderr: '',
    });
  });

  it.skipIf(postgres === undefined)(
    'applies those of a PostgreSQL database, and fails with one line when it cannot reach one',
    async () => {
      const url = await postgres!.createDatabase();
      const location = `PostgreSQL at ${new URL(url).host}${new URL(url).pathname}`;
      const applied = `migrations applied: ${migrations('postgres').join(', ')}`;
      expect(migrate('backend', { DATABASE_URL: url })).toEqual({
        code: 0,
        stdout: `backend: users stored in ${location}: ${applied}\n`,
        stderr: '',
      });
      expect(migrate('database', { DATABASE_URL: url })).toEqual({
        code: 0,
        stdout: `database: users stored in ${location}: no migration pending\n`,
        stderr: '',
      });
      const unreachable = migrate('database', { DATABASE_URL: 'postgresql://user:secret@127.0.0.1:1/none' });
      expect(unreachable).toMatchObject({ code: 1, stdout: '' });
      expect(unreachable.stderr).toMatch(/^database: database unavailable: .*ECONNREFUSED.*\n$/);
    },
  );
});

describe('variant B refuses to start when a migration fails, with one line naming it', () => {
  afterAll(() => postgres?.destroy());
  // A database of the version before migrations whose e-mails collide under 0002's rule.
  const expected = `database: ${collisionMessage}\n`;

  it('on SQLite', async () => {
    const dir = join(dataDir, 'colliding');
    mkdirSync(dir);
    const db = new Database(join(dir, 'app.db'));
    db.exec(beforeMigrations('sqlite') + collidingUsers);
    db.close();
    expect(await runServiceToExit('database', { PORT: '0', DATA_DIR: dir })).toEqual({ code: 1, output: expected });
    expect(migrate('database', { DATA_DIR: dir })).toEqual({ code: 1, stdout: '', stderr: expected });
  });

  it.skipIf(postgres === undefined)('on PostgreSQL', async () => {
    const url = await postgres!.createDatabase();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(beforeMigrations('postgres') + collidingUsers);
    await client.end();
    expect(await runServiceToExit('database', { PORT: '0', DATABASE_URL: url })).toEqual({ code: 1, output: expected });
    expect(migrate('database', { DATABASE_URL: url })).toEqual({ code: 1, stdout: '', stderr: expected });
  });
});
