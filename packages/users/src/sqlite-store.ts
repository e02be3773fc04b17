import { tracingChannel } from 'node:diagnostics_channel';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import type { Worker } from 'node:worker_threads';
import { migrateSqlite } from './migrate-sqlite.js';
import { migrationsDir, readMigrations, type MigrationOptions } from './migrations.js';
import { PageCache } from './page-cache.js';
import { classifySqlite, SqliteWriterThread } from './sqlite-writer-thread.js';
import type { NewUser, User, UserPage, UserStore } from './user-store.js';
import { WriteBatcher, type BatchOptions } from './write-batcher.js';

export interface SqliteStoreOptions extends BatchOptions, MigrationOptions {
  /** Told of each writer thread as it starts (tests end one to see the store survive it). */
  onWriterStart?: (worker: Worker) => void;
}

/** The file's name inside DATA_DIR, as the original's `sqlite:///app.db`. */
export const SQLITE_FILE = 'app.db';

/** Most JSON text the page cache holds: a few pages of users, never a whole large table. */
const PAGE_CACHE_BYTES = 4 * 1024 * 1024;

// Each statement is published on a tracing channel (Node's diagnostics_channel) with its summary, never its
// parameters, for a tracer to make it a span (packages/telemetry does); with no subscriber it just runs.
interface Statement {
  operation: string;
  collection?: string;
}
const statements = tracingChannel<unknown, Statement>('svc.users.sqlite.statement');
const traceStatement = <T>(statement: Statement, run: () => T | Promise<T>): Promise<T> =>
  statements.tracePromise(() => Promise.resolve(run()), { ...statement });
const selectStatement: Statement = { operation: 'SELECT', collection: 'users' };
const insertStatement: Statement = { operation: 'INSERT', collection: 'users' };
const probeStatement: Statement = { operation: 'SELECT' };

/**
 * A SQLite file in dataDir through better-sqlite3. Reads are synchronous and short, on this
 * thread's connection; creates go to a writer thread (sqlite-writer.ts) with the write connection,
 * which commits those that arrive together in one transaction and one sync (group commit). WAL lets
 * readers run beside the writer, and the busy timeout lets two processes share the file.
 */
export function createSqliteStore(dataDir: string, options: SqliteStoreOptions = {}): UserStore {
  mkdirSync(dataDir, { recursive: true });
  const file = join(dataDir, SQLITE_FILE);
  const db = new Database(file);
  // The wait first: processes opening a new file together each switch it to WAL.
  db.pragma('busy_timeout = 2000');
  db.pragma('journal_mode = WAL');
  // FULL, here and in the writer: each commit syncs the WAL before it returns, so a 201 is on disk
  // as PostgreSQL's default (synchronous_commit=on) promises; NORMAL syncs only at checkpoints, so a
  // power loss could take back users already answered 201.
  db.pragma('synchronous = FULL');
  // Migrated here, before the first read is prepared and the writer thread opens the file; that thread
  // does every later write.
  try {
    const applied = migrateSqlite(db, readMigrations(options.migrationsDir ?? migrationsDir('sqlite')));
    options.onMigrated?.(applied);
  } catch (error) {
    db.close();
    throw error;
  }
  // json_object writes what JSON.stringify writes for these columns; one row per page.
  const page = db.prepare<[number, number], { json: string | null; last_id: number | null }>(
    `SELECT group_concat(json_object('id', id, 'name', name, 'email', email, 'created_at', created_at), ',' ORDER BY id) AS json,
      max(id) AS last_id FROM (SELECT * FROM users WHERE id > ? ORDER BY id LIMIT ?)`,
  );
  const after = db.prepare<[number], number>('SELECT EXISTS (SELECT 1 FROM users WHERE id > ?)').pluck();
  const probe = db.prepare<[], { ok: number }>('SELECT 1 AS ok');
  // The head of the list (a small table whole, the first page a client asks for) is read far more
  // often than the table changes, so those pages are kept (at most PAGE_CACHE_BYTES of JSON) until
  // another connection commits (this store's writer thread, or another process on the file), which
  // changes PRAGMA data_version, far cheaper to check than a page to read. Later pages are not kept:
  // a long list streamed through the cache would keep every batch alive long enough to reach V8's
  // old generation.
  const dataVersion = db.prepare<[], number>('PRAGMA data_version').pluck();
  const cache = new PageCache(PAGE_CACHE_BYTES);
  let cachedVersion: number | undefined;
  const readPage = (from: number, limit: number): UserPage => {
    const row = page.get(from, limit);
    const lastId = row?.last_id ?? undefined;
    return { json: row?.json ?? '', lastId, more: lastId !== undefined && after.get(lastId) === 1 };
  };

  /** The action's result, its error classified; in a span of `statement` when tracing is on. */
  const run = <T>(action: () => T, statement?: Statement): Promise<T> => {
    try {
      return Promise.resolve(statement === undefined ? action() : traceStatement(statement, action));
    } catch (error) {
      return Promise.reject(classifySqlite(error));
    }
  };

  const writer = new SqliteWriterThread(file, options.onWriterStart);
  let firstProbe = true;
  const creates = new WriteBatcher<NewUser, User>((users) => writer.write(users), options);

  return {
    // The file is migrated when it is opened above; nothing can be pending here.
    init: () => Promise.resolve(),
    page: (from: number, limit: number) =>
      run(() => {
        const version = dataVersion.get() as number;
        if (version !== cachedVersion) {
          cache.clear();
          cachedVersion = version;
        }
        if (from !== 0) return readPage(from, limit);
        return cache.get(from, limit) ?? cache.set(from, limit, readPage(from, limit));
      }, selectStatement),
    // The span covers the wait for the batch as well as its transaction: what the request waited for.
    create: (user: NewUser) => traceStatement(insertStatement, () => creates.submit(user)),
    // Both connections: the list needs this one, creates the writer's (a dead writer is started again).
    // The writer thread boots a Node environment of its own: the first probe starts it and answers for
    // this connection alone, which opened the same file, so the service is healthy without waiting for
    // that boot; every later probe asks the writer too.
    ping: async (timeoutMs: number) => {
      const read = await run(() => Boolean(probe.get()?.ok), probeStatement).catch(() => false);
      if (firstProbe) {
        firstProbe = false;
        writer.started();
        return read;
      }
      return read && (await writer.ping(timeoutMs));
    },
    // Creates already accepted are written and answered first; the writer's connection closes last,
    // so the WAL's final checkpoint runs on its thread.
    close: async () => {
      await creates.close();
      await run(() => void db.close());
      await writer.close();
    },
  };
}
