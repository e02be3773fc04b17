import { tracingChannel } from 'node:diagnostics_channel';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { TurnBatcher, type BatchOptions } from './turn-batcher.js';
import { DatabaseUnavailableError, DuplicateEmailError, type NewUser, type User, type UserStore } from './user-store.js';

export type SqliteStoreOptions = BatchOptions;

/** The file's name inside DATA_DIR, as the original's `sqlite:///app.db`. */
export const SQLITE_FILE = 'app.db';

// SQLite has no timestamp type: created_at is ISO 8601 text in UTC, written by SQLite itself in
// the same form the PostgreSQL adapter returns. The CHECKs hold the limits PostgreSQL's varchar holds.
const createTable = `CREATE TABLE IF NOT EXISTS users (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  name TEXT NOT NULL CHECK (length(name) <= 100),
  email TEXT NOT NULL UNIQUE CHECK (length(email) <= 120),
  created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
)`;

// Codes meaning "the file is busy, unreadable or full", worth a retry rather than a bug report.
const unavailableCodes = /^SQLITE_(BUSY|LOCKED|IOERR|FULL|CANTOPEN|READONLY|NOMEM)/;

/** The error of a SQLite call: unavailable (503) for the codes above, otherwise as it came (500). */
function classify(error: unknown): unknown {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && unavailableCodes.test(code) ? new DatabaseUnavailableError(error) : error;
}

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
 * A SQLite file in dataDir through better-sqlite3, on this thread: its calls are synchronous and
 * short. The creates of one turn of the event loop are committed together, in one transaction and
 * one sync (turn-batcher.ts). WAL and the busy timeout let another process (a backup) share the file.
 */
export function createSqliteStore(dataDir: string, options: SqliteStoreOptions = {}): UserStore {
  mkdirSync(dataDir, { recursive: true });
  const db = new Database(join(dataDir, SQLITE_FILE));
  db.pragma('journal_mode = WAL');
  db.pragma('busy_timeout = 2000');
  // FULL: each commit syncs the WAL before it returns, so a 201 is on disk as PostgreSQL's default
  // (synchronous_commit=on) promises; NORMAL syncs only at checkpoints, so a power loss could take
  // back users already answered 201.
  db.pragma('synchronous = FULL');
  db.exec(createTable);
  const page = db.prepare<[number, number], User>('SELECT id, name, email, created_at FROM users WHERE id > ? ORDER BY id LIMIT ?');
  const insert = db.prepare<[NewUser], User>(
    'INSERT INTO users (name, email) VALUES (@name, @email) ON CONFLICT (email) DO NOTHING RETURNING id, name, email, created_at',
  );
  const probe = db.prepare<[], { ok: number }>('SELECT 1 AS ok');

  /** The action's result, its error classified; in a span of `statement` when tracing is on. */
  const run = <T>(action: () => T, statement?: Statement): Promise<T> => {
    try {
      return Promise.resolve(statement === undefined ? action() : traceStatement(statement, action));
    } catch (error) {
      return Promise.reject(classify(error));
    }
  };

  // A failing row (a CHECK) is that row's failure only; an error after which SQLite rolled the
  // transaction back (a full disk, an I/O error) fails the batch, as does a failed COMMIT.
  const insertBatch = db.transaction((users: NewUser[]) =>
    users.map((user): PromiseSettledResult<User> => {
      try {
        const stored = insert.get(user);
        return stored === undefined
          ? { status: 'rejected', reason: new DuplicateEmailError(user.email) }
          : { status: 'fulfilled', value: stored };
      } catch (error) {
        if (!db.inTransaction) throw error;
        return { status: 'rejected', reason: classify(error) };
      }
    }),
  );
  // IMMEDIATE: the write lock is taken at BEGIN, so another process's write waits there (busy timeout).
  const creates = new TurnBatcher<NewUser, User>((users) => run(() => insertBatch.immediate(users)), options);

  return {
    // The table is created when the file is opened above; nothing can be pending here.
    init: () => Promise.resolve(),
    page: (from: number, limit: number) => run(() => page.all(from, limit), selectStatement),
    // The span covers the wait for the batch as well as its transaction: what the request waited for.
    create: (user: NewUser) => traceStatement(insertStatement, () => creates.submit(user)),
    ping: () => run(() => Boolean(probe.get()?.ok), probeStatement).catch(() => false),
    // Creates already accepted are written and answered first; closing the last connection
    // checkpoints the WAL into the file.
    close: async () => {
      await creates.close();
      await run(() => void db.close());
    },
  };
}
