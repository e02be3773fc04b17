import { listAll } from './store-suite.js';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../src/postgres-store.js';
import { DatabaseUnavailableError, type UserStore } from '../src/user-store.js';
import { MAX_STREAM_BATCH } from '../src/list-stream.js';
import type { User } from '@sample-services/users-api/schemas';
import { usePostgres } from '@sample-services/testing/postgres';
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
    // A table of the same name without most of our columns (with the one the migrations index).
    await sql(url, 'CREATE TABLE users (id integer PRIMARY KEY, email text)');
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

  it('shares page queries under concurrency, yet every read that starts after a write was acknowledged shows it', async () => {
    const url = await postgres!.createDatabase();
    const reader = createPostgresStore(url);
    const writer = createPostgresStore(url); // another instance: its writes reach the reader only through the database
    try {
      await reader.init();
      // Enough rows that a page query is still in flight when the write is acknowledged.
      await sql(url, "INSERT INTO users (name, email) SELECT 'U' || i, 'u' || i || '@example.com' FROM generate_series(1, 900) AS i");
      for (let round = 0; round < 40; round += 1) {
        const inFlight = Array.from({ length: 5 }, () => reader.page(0, 1000));
        const written = await writer.create({ name: `W${round}`, email: `w${round}@example.com` });
        const page = await reader.page(0, 1000);
        expect(page.json).toContain(`"email":"w${round}@example.com"`);
        expect(page.lastId).toBe(written.id);
        // Those sent before the write may or may not show it, but each is a whole page.
        for (const before of await Promise.all(inFlight))
          expect(JSON.parse(`[${before.json}]`)).toHaveLength(900 + round + (before.lastId === written.id ? 1 : 0));
      }
    } finally {
      await Promise.all([reader.close(), writer.close()]);
    }
  });

  it('reads batches of the streamed list with COPY, byte for byte what JSON.stringify writes', async () => {
    const url = await postgres!.createDatabase();
    const store = createPostgresStore(url);
    try {
      const names = [
        'quo"te',
        'back\\slash \\" \\n',
        'ctl\u0001\u0002\u001f\u007f',
        'nl\n\r\t\b\f',
        'ü€😀',
        'ls\u2028ps\u2029',
        '</script>',
        'comma,semi;',
      ];
      const users: User[] = [];
      for (const [i, name] of names.entries()) users.push(await store.create({ name, email: `u${i}@example.com` }));
      const whole = await store.batch!(0, MAX_STREAM_BATCH);
      expect(whole.body.toString()).toBe(users.map((user) => `,${JSON.stringify(user)}`).join(''));
      expect(whole).toMatchObject({ lastId: users.at(-1)!.id, more: false });
      const rest = await store.batch!(users[5]!.id, MAX_STREAM_BATCH);
      expect(rest.body.toString()).toBe(
        users
          .slice(6)
          .map((user) => `,${JSON.stringify(user)}`)
          .join(''),
      );
      expect(await store.batch!(users.at(-1)!.id, MAX_STREAM_BATCH)).toMatchObject({ lastId: undefined, more: false });
      expect((await store.batch!(users.at(-1)!.id, MAX_STREAM_BATCH)).body.length).toBe(0);
    } finally {
      await store.close();
    }
  });

  it('rejects a COPY batch the server refuses, and serves on without the connection it ran on', async () => {
    const url = await postgres!.createDatabase();
    // A table of the same name without most of our columns (with the one the migrations index).
    await sql(url, 'CREATE TABLE users (id integer PRIMARY KEY, email text)');
    const store = createPostgresStore(url);
    try {
      const error: unknown = await store.batch!(0, MAX_STREAM_BATCH).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(pg.DatabaseError);
      expect((error as pg.DatabaseError).code).toBe('42703'); // undefined column
      expect(await store.ping(1_000)).toBe(true);
    } finally {
      await store.close();
    }
  });

  /**
   * Ten users, and a COPY batch of them through a store on storeUrl left waiting on another session's lock
   * of the table; `cut` then ends its connection. The batch fails as unavailable, nothing else throws, and
   * once the lock is gone the next batch reads all ten on a new connection.
   */
  async function cutWaitingCopy(url: string, storeUrl: string, cut: (locker: pg.Client) => Promise<void>): Promise<void> {
    const store = createPostgresStore(storeUrl);
    const locker = new pg.Client({ connectionString: url });
    await locker.connect();
    try {
      await store.init();
      await sql(url, "INSERT INTO users (name, email) SELECT 'U' || i, 'u' || i || '@example.com' FROM generate_series(1, 10) AS i");
      await locker.query('BEGIN; LOCK TABLE users IN ACCESS EXCLUSIVE MODE');
      const batch = store.batch!(0, MAX_STREAM_BATCH).catch((e: unknown) => e);
      await cut(locker);
      expect(await batch).toBeInstanceOf(DatabaseUnavailableError);
      await locker.query('COMMIT');
      expect(await store.batch!(0, MAX_STREAM_BATCH)).toMatchObject({ lastId: 10, more: false });
    } finally {
      await locker.end();
      await store.close();
    }
  }
  /** The COPY under way in the locker's database (an idle connection's last query stays in pg_stat_activity). */
  const copyUnderWay = "datname = current_database() AND application_name = 'svc-users' AND state = 'active' AND query LIKE 'COPY%'";

  it('fails a COPY batch cut by the server as unavailable, and reads the next one on a new connection', async () => {
    const url = await postgres!.createDatabase();
    // Its backend terminated, as by an operator or a restart: the server says so, then closes.
    await cutWaitingCopy(url, url, async (locker) => {
      for (let terminated = 0; terminated === 0;) {
        terminated = (await locker.query(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE ${copyUnderWay}`)).rowCount ?? 0;
      }
    });
  });

  it('fails a COPY batch whose connection is cut without a word from the server as unavailable, nothing thrown elsewhere', async () => {
    const url = new URL(await postgres!.createDatabase());
    // A relay between the store and the server, whose connections the test cuts as a dead network would.
    const relayed = new Set<Socket>();
    const relay = createServer((socket) => {
      const server = connect(Number(url.port), url.hostname);
      relayed.add(socket).add(server);
      socket.pipe(server).pipe(socket);
      for (const end of [socket, server]) end.on('error', () => undefined).on('close', () => [socket, server].forEach((s) => s.destroy()));
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const relayUrl = new URL(url);
    relayUrl.port = String((relay.address() as AddressInfo).port);
    try {
      await cutWaitingCopy(url.href, relayUrl.href, async (locker) => {
        // A loaded machine may take seconds to open the store's connection: more than expect.poll's 1 s default.
        await expect
          .poll(async () => (await locker.query(`SELECT 1 FROM pg_stat_activity WHERE ${copyUnderWay}`)).rowCount, { timeout: 30_000 })
          .toBe(1);
        // The client's socket ends with no error message from the server: pg emits 'error' on the client
        // at once, which without the store's listener is an uncaught exception failing this file.
        for (const socket of relayed) socket.destroy();
      });
    } finally {
      relay.close();
    }
  });

  it('says more users may follow a full COPY batch, and reads as many users as asked', async () => {
    const url = await postgres!.createDatabase();
    const store = createPostgresStore(url);
    try {
      await store.init();
      await sql(url, "INSERT INTO users (name, email) SELECT 'U' || i, 'u' || i || '@example.com' FROM generate_series(1, 5005) AS i");
      const full = await store.batch!(0, MAX_STREAM_BATCH);
      expect(full).toMatchObject({ lastId: 5_000, more: true });
      const users = JSON.parse(`[${full.body.toString().slice(1)}]`) as User[];
      expect(users.map((user) => user.id)).toEqual(Array.from({ length: 5_000 }, (_, i) => i + 1));
      expect(await store.batch!(5_000, MAX_STREAM_BATCH)).toMatchObject({ lastId: 5_005, more: false });
      const small = await store.batch!(10, 3);
      expect(small).toMatchObject({ lastId: 13, more: true });
      expect((JSON.parse(`[${small.body.toString().slice(1)}]`) as User[]).map((user) => user.id)).toEqual([11, 12, 13]);
    } finally {
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
