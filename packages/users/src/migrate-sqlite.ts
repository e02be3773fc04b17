import type Database from 'better-sqlite3';
import { emailKey } from '@sample-services/users-api/email-key';
import { MIGRATIONS_TABLE, MigrationError, type Migration } from './migrations.js';

const createRecords = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  version INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  applied_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))
)`;

/** How long a process waits for another's migration (SQLite's write lock) before it gives up. */
const MIGRATION_WAIT_MS = 60_000;

/**
 * The functions SQLite migrations may call, registered on the connection that applies them:
 * email_key_of(email), the uniqueness rule of @sample-services/users-api, and migration_error(text),
 * which stops the migration with that text (SQLite has no RAISE outside triggers).
 */
function registerFunctions(db: Database.Database): void {
  db.function('email_key_of', { deterministic: true }, (email: unknown) => (typeof email === 'string' ? emailKey(email) : email));
  db.function('migration_error', (message: unknown) => {
    throw new Error(String(message));
  });
}

/**
 * Applies the migrations not yet recorded, in version order, each in a `BEGIN IMMEDIATE` transaction
 * with its record: the write lock makes processes opening the file together wait for each other (the
 * applied versions are read again under it, so each runs once), and a failure rolls that migration
 * back whole (SQLite's DDL is transactional). Returns the names applied; throws a MigrationError.
 */
export function migrateSqlite(db: Database.Database, migrations: Migration[]): string[] {
  registerFunctions(db);
  const busyTimeout = db.pragma('busy_timeout', { simple: true }) as number;
  db.pragma(`busy_timeout = ${MIGRATION_WAIT_MS}`);
  const applied: string[] = [];
  try {
    for (const migration of migrations) {
      db.exec('BEGIN IMMEDIATE');
      try {
        db.exec(createRecords);
        const recorded = db.prepare<[], number>(`SELECT version FROM ${MIGRATIONS_TABLE}`).pluck().all();
        if (!recorded.includes(migration.version)) {
          db.exec(migration.sql);
          db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES (?, ?)`).run(migration.version, migration.name);
          applied.push(migration.name);
        }
        db.exec('COMMIT');
      } catch (error) {
        if (db.inTransaction) db.exec('ROLLBACK');
        throw new MigrationError(migration.name, error);
      }
    }
  } finally {
    db.pragma(`busy_timeout = ${busyTimeout}`);
  }
  return applied;
}
