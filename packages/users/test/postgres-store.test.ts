import { listAll } from './store-suite.js';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore, DatabaseUnavailableError, type UserStore } from '../src/index.js';
import { usePostgres } from '@svc/testing/postgres';
import { storeSuite } from './store-suite.js';

const postgres = await usePostgres();

/** Runs SQL on a database directly, as another application would. */
async function sql(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end();
  }
}

describe.skipIf(postgres === undefined)('PostgreSQL adapter', () => {
  afterAll(() => postgres?.destroy());
  const urlOf = new Map<UserStore, string>();

  storeSuite(
    async (options) => {
      const url = await postgres!.createDatabase();
      const store = createPostgresStore(url, options);
      urlOf.set(store, url);
      return store;
    },
    async (store) => createPostgresStore(urlOf.get(store)!),
  );

  it("works on the original app's table, whose created_at has no time zone and holds UTC", async () => {
    const url = await postgres!.createDatabase();
    // What Flask-SQLAlchemy created: serial id, varchar columns, naive timestamp written with utcnow().
    // A server whose default time zone is not UTC: our sessions must not depend on it.
    await sql(url, `ALTER DATABASE ${new URL(url).pathname.slice(1)} SET TimeZone = 'America/New_York'`);
    await sql(
      url,
      `CREATE TABLE users (id serial PRIMARY KEY, name varchar(100) NOT NULL, email varchar(120) NOT NULL UNIQUE, created_at timestamp);
       INSERT INTO users (name, email, created_at) VALUES ('Old', 'old@example.com', '2024-05-06 07:08:09.123');`,
    );
    const store = createPostgresStore(url);
    try {
      await store.init();
      expect(await listAll(store)).toEqual([{ id: 1, name: 'Old', email: 'old@example.com', created_at: '2024-05-06T07:08:09.123Z' }]);
      expect((await store.create({ name: 'New', email: 'new@example.com' })).id).toBe(2);
    } finally {
      await store.close();
    }
  });

  it('treats a broken query as a bug, not as the database being unavailable', async () => {
    const url = await postgres!.createDatabase();
    await sql(url, 'CREATE TABLE users (id integer PRIMARY KEY)'); // a table of the same name without our columns
    const store = createPostgresStore(url);
    try {
      const error: unknown = await listAll(store).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(pg.DatabaseError);
      expect(error).not.toBeInstanceOf(DatabaseUnavailableError);
      expect((error as pg.DatabaseError).code).toBe('42703'); // undefined column
    } finally {
      await store.close();
    }
  });

  it('fails a page query cut by the server as unavailable, and reads the next one on a new connection', async () => {
    const url = await postgres!.createDatabase();
    const store = createPostgresStore(url);
    const locker = new pg.Client({ connectionString: url });
    // Watches from outside the locker's transaction: within one, PostgreSQL shows the sessions' queries
    // as they were at its first look, so a query sent after that would never be seen there.
    const watcher = new pg.Client({ connectionString: url });
    await Promise.all([locker.connect(), watcher.connect()]);
    try {
      await store.init();
      await sql(url, "INSERT INTO users (name, email) SELECT 'U' || i, 'u' || i || '@example.com' FROM generate_series(1, 10) AS i");
      // The page's query waits for the lock until its backend is terminated, as by an operator or a restart.
      await locker.query('BEGIN; LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const cut = store.page(0, 100).catch((e: unknown) => e);
      const terminate =
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = 'svc-users' AND wait_event_type = 'Lock'";
      await expect.poll(async () => (await watcher.query(terminate)).rowCount, { interval: 20, timeout: 4_000 }).toBe(1);
      expect(await cut).toBeInstanceOf(DatabaseUnavailableError);
      await locker.query('COMMIT');
      expect(await store.page(0, 100)).toHaveLength(10);
    } finally {
      await Promise.all([locker.end(), watcher.end()]);
      await store.close();
    }
  });

  it('answers a ping within its time while every pool connection waits on a lock: a busy pool is not a database gone', async () => {
    const url = await postgres!.createDatabase();
    const store = createPostgresStore(url, { poolSize: 2 });
    const locker = new pg.Client({ connectionString: url });
    try {
      await store.init();
      await locker.connect();
      await locker.query('BEGIN');
      await locker.query('LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      // Both pool connections wait on the lock (each page is its own query), with more queued behind them.
      const blocked = [0, 1, 2, 3].map((after) => store.page(after, 10).catch(() => undefined));
      await expect.poll(async () => (await store.poolStats?.())?.waiting ?? 0).toBeGreaterThan(0);
      const started = performance.now();
      expect(await store.ping(1_000)).toBe(true);
      expect(performance.now() - started).toBeLessThan(1_000);
      await locker.query('COMMIT');
      await Promise.all(blocked);
    } finally {
      await locker.end();
      await store.close();
    }
  });
});
