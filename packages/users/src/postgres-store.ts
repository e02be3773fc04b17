import pg from 'pg';
import { Coalescer } from './coalesce.js';
import { copyBatch, copyText } from './copy-batch.js';
import { migratePostgres } from './migrate-postgres.js';
import { MigrationError, migrationsDir, readMigrations, type MigrationOptions } from './migrations.js';
import { classify } from './postgres-errors.js';
import { Permits } from './permits.js';
import {
  DatabaseUnavailableError,
  DuplicateEmailError,
  type NewUser,
  type User,
  type UserBatch,
  type UserPage,
  type UserStore,
} from './user-store.js';
import { withTimeout } from './with-timeout.js';
import { WriteBatcher, type BatchOptions } from './write-batcher.js';

export interface PostgresStoreOptions extends BatchOptions, MigrationOptions {
  /** Connections in the pool; default DEFAULT_POOL_SIZE. */
  poolSize?: number;
  /** Longest wait for a connection (new or from the pool); default 3000 ms. */
  connectTimeoutMs?: number;
  /** Told about errors of idle connections (the server went away); they are then discarded. */
  onIdleError?: (error: Error) => void;
}

/** Distinct pages shared at once (coalesce.ts); beyond that a page query is not shared. */
const SHARED_PAGES = 256;

/** Connections in the pool unless DB_POOL_SIZE says otherwise (docs/performance.md measures sizes). */
export const DEFAULT_POOL_SIZE = 10;

/** Longest a query may take, enforced by the server and by the client. */
const QUERY_TIMEOUT_MS = 5_000;

// created_at is formatted by the server, in UTC, the same way for INSERT and SELECT.
const columns = `id, name, email, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;

// One page as JSON made by the server (row_to_json writes what JSON.stringify writes for these
// columns), with the last id and whether more follow: one row of three values, whatever the page size.
const pageText = `WITH page AS (SELECT ${columns} FROM users WHERE id > $1 ORDER BY id LIMIT $2)
SELECT coalesce(string_agg(row_to_json(page)::text, ',' ORDER BY id), '') AS json,
  (SELECT max(id) FROM page) AS last_id,
  EXISTS (SELECT 1 FROM users WHERE id > (SELECT max(id) FROM page)) AS more
FROM page`;
const selectUsers = `SELECT ${columns} FROM users`;
// A batch of creates in one statement, so one commit: rows inserted in the arrays' order (ids too),
// an email already taken, or taken earlier in the same arrays, skipped and so missing from RETURNING.
// Taken as the migrations define it: every unique index decides (0002's is on the normalized e-mail).
const insertText = `INSERT INTO users (name, email)
SELECT name, email FROM unnest($1::text[], $2::text[]) WITH ORDINALITY AS batch (name, email, position) ORDER BY position
ON CONFLICT DO NOTHING RETURNING ${columns}`;

/**
 * A client out of the pool, with a listener for its connection's loss: pg-pool listens only while a
 * client idles, and a backend terminated mid-query (an operator, a restart) makes the client emit
 * 'error', at times before the query itself rejects: without a listener, an uncaught exception. The
 * query's rejection is what the caller answers; `release` gives the client back and drops the listener.
 */
async function checkOut(pool: pg.Pool): Promise<{ client: pg.PoolClient; release: (error?: unknown) => void }> {
  const client = await pool.connect();
  const lost = (): void => undefined;
  client.on('error', lost);
  return {
    client,
    release(error) {
      // A client whose query failed is in an unknown state: closed, not given back.
      client.release(error === undefined ? undefined : error instanceof Error ? error : new Error(String(error)));
      client.off('error', lost);
    },
  };
}

/** PostgreSQL through a pg pool that fails fast while the server is away and reconnects by itself. */
export function createPostgresStore(url: string, options: PostgresStoreOptions = {}): UserStore {
  const poolSize = options.poolSize ?? DEFAULT_POOL_SIZE;
  const poolConfig: pg.PoolConfig = {
    connectionString: url,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 3_000,
    statement_timeout: QUERY_TIMEOUT_MS,
    keepAlive: true,
    application_name: 'svc-users',
    // Sessions in UTC: created_at is then rendered right even in a table whose column has no time
    // zone (as the original app created it, with UTC values).
    options: '-c TimeZone=UTC',
  };
  const pool = new pg.Pool({ ...poolConfig, max: poolSize });
  // Probes get a connection of their own: a pool busy with the load is not a database gone, and a
  // probe queued behind it would take the instance out of rotation when it is busiest.
  const probePool = new pg.Pool({ ...poolConfig, max: 1 });
  // Without a listener an idle connection's error (server restart) would crash the process.
  for (const each of [pool, probePool]) each.on('error', (error) => options.onIdleError?.(error));

  // The client-side bound also covers a server that stopped answering altogether. Not pg's
  // query_timeout: its timer holds the query, and so the rows being read, from a long-lived
  // timer list, which moves every result into V8's old generation.
  const query = async (config: pg.QueryConfig): Promise<pg.QueryResult> => {
    try {
      return await withTimeout(pool.query(config), QUERY_TIMEOUT_MS, 'the query');
    } catch (error) {
      throw classify(error);
    }
  };

  // Without the queries' time bound: a migration on a large table, or the wait for another
  // replica's, takes longer. RESET gives the connection its pool's bound back.
  const migrate = async (): Promise<void> => {
    const { client, release } = await checkOut(pool).catch((error: unknown) => Promise.reject(classify(error)));
    try {
      await client.query('SET statement_timeout = 0');
      const applied = await migratePostgres(client, readMigrations(options.migrationsDir ?? migrationsDir('postgres')));
      options.onMigrated?.(applied);
      await client.query('RESET statement_timeout');
      release();
    } catch (error) {
      release(error);
      throw error instanceof MigrationError || error instanceof DatabaseUnavailableError ? error : classify(error);
    }
  };

  let schemaReady: Promise<void> | undefined;
  const init = (): Promise<void> => {
    schemaReady ??= migrate().catch((error: unknown) => {
      schemaReady = undefined; // try again on the next call
      throw error;
    });
    return schemaReady;
  };

  const readPage = async (after: number, limit: number): Promise<UserPage> => {
    // Named statements are parsed once per connection.
    const result = await query({ name: 'users-page', text: pageText, values: [after, limit] });
    const row = result.rows[0] as { json: string; last_id: number | null; more: boolean };
    return { json: row.json, lastId: row.last_id ?? undefined, more: row.more };
  };
  // Many clients reading the same page at once (the head of the list) share queries, never
  // results from before they asked (coalesce.ts): PostgreSQL, not Node, limits the list's throughput.
  const pages = new Coalescer<UserPage>(SHARED_PAGES);
  // The most connections reading batches of streamed lists at once: the others stay for pages,
  // creates and probes, which many slow list readers would otherwise keep waiting past the pool's timeout.
  const batchPermits = new Permits(Math.max(1, Math.floor(poolSize / 2)));

  // Each user gets the row RETURNING gave for its email, the first of the batch to ask for it; the
  // others with that email, and those whose email was taken before, are duplicates.
  const insertUsers = async (users: NewUser[]): Promise<PromiseSettledResult<User>[]> => {
    const values = [users.map((user) => user.name), users.map((user) => user.email)];
    // One query for the batch: its span (pg's instrumentation) sits under one of the requests it serves.
    const result = await query({ name: 'users-insert', text: insertText, values });
    const stored = new Map((result.rows as User[]).map((row) => [row.email, row]));
    return users.map((user): PromiseSettledResult<User> => {
      const row = stored.get(user.email);
      stored.delete(user.email);
      return row === undefined ? { status: 'rejected', reason: new DuplicateEmailError(user.email) } : { status: 'fulfilled', value: row };
    });
  };
  const creates = new WriteBatcher<NewUser, User>(async (users) => {
    await init();
    try {
      return await insertUsers(users);
    } catch (error) {
      // The server refused the statement (a value it will not take): nothing was written, so each
      // user is tried alone and only the one at fault fails. Unavailable fails the whole batch.
      if (users.length === 1 || error instanceof DatabaseUnavailableError) throw error;
      const outcomes: PromiseSettledResult<User>[] = [];
      for (const user of users)
        outcomes.push(...(await insertUsers([user]).catch((reason: unknown) => [{ status: 'rejected' as const, reason }])));
      return outcomes;
    }
  }, options);

  return {
    init,
    async page(after: number, limit: number) {
      await init();
      return pages.run(`${after}:${limit}`, () => readPage(after, limit));
    },
    // A batch is one COPY (not one for the whole list: that would hold a connection and a snapshot,
    // keeping VACUUM from its dead rows, for as long as the slowest client takes to read).
    async batch(after: number, limit: number) {
      await init();
      const text = copyText(selectUsers, after, limit);
      // One bound for the whole batch, the wait for a connection included, as for the other queries.
      const copy = async (): Promise<UserBatch> => {
        const deadline = performance.now() + QUERY_TIMEOUT_MS;
        const { client, release } = await checkOut(pool);
        try {
          const batch = await copyBatch(client, text, limit, Math.max(0, deadline - performance.now()));
          release();
          return batch;
        } catch (error) {
          // A COPY cut short leaves the connection in the middle of it.
          release(error);
          throw error;
        }
      };
      try {
        return await batchPermits.run(copy);
      } catch (error) {
        throw classify(error);
      }
    },
    // Creates that arrive while a batch is written go together in the next one (write-batcher.ts).
    create: (user: NewUser) => creates.submit(user),
    async ping(timeoutMs: number) {
      try {
        // The pool's own timeouts end the query later; the probe's caller stops waiting now.
        const result = await withTimeout(probePool.query<{ ok: unknown }>('SELECT 1 AS ok'), timeoutMs, 'SELECT 1');
        return Boolean(result.rows[0]?.ok);
      } catch {
        return false;
      }
    },
    poolStats: () => ({ total: pool.totalCount, idle: pool.idleCount, waiting: pool.waitingCount }),
    // Creates already accepted are written and answered before the pool ends.
    async close() {
      await creates.close();
      await Promise.all([pool.end(), probePool.end()]);
    },
  };
}
