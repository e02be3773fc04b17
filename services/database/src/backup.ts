/**
 * Online backup of variant B's SQLite file while the service runs and writes:
 *
 *   node dist/backup.js TARGET       (in the image: docker exec <container> node dist/backup.js /app/data/backup.db)
 *
 * Copies DATA_DIR/app.db to TARGET, a new file, through SQLite's backup API: never a copy of the
 * live file, whose last commits may still be only in its -wal beside it. TARGET is one file on its
 * own (no -wal needed), ready to be placed as app.db in an empty DATA_DIR. Errors are one line on
 * stderr: exit 2 for a bad argument, 1 when the backup fails (TARGET is then removed).
 */
import { existsSync, rmSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { readStoreConfig } from '@sample-services/users/open-store';
import { SQLITE_FILE } from '@sample-services/users/sqlite-store';

/**
 * Pages per backup step: all of them. One step reads the file in one read transaction, so the copy
 * is the database as of one commit; between two steps the service's commits (another connection)
 * would restart the copy, and under steady writes it might never finish.
 */
const ALL_PAGES = 2 ** 31 - 1;

function fail(message: string, code: 1 | 2): never {
  process.stderr.write(`backup: ${message}\n`);
  process.exit(code);
}

const [targetArg, ...extra] = process.argv.slice(2);
if (targetArg === undefined || targetArg === '' || extra.length > 0) fail('usage: node dist/backup.js TARGET (a new file)', 2);
const target = resolve(targetArg);
// Never overwrite: TARGET might be the live file or an earlier backup.
if (existsSync(target)) fail(`${target} already exists: name a new file`, 2);

let source: string;
try {
  const store = readStoreConfig(process.env);
  if (store.databaseUrl !== undefined) fail('DATABASE_URL is set: the users are in PostgreSQL, back them up with pg_dump', 2);
  source = join(store.dataDir, SQLITE_FILE);
} catch (error) {
  fail((error as Error).message, 2);
}
if (!existsSync(source)) fail(`${source} does not exist: DATA_DIR must be the service's`, 1);

const started = performance.now();
try {
  // Read-only: this process never writes to the live file, whatever happens.
  const db = new Database(source, { readonly: true, fileMustExist: true });
  try {
    await db.backup(target, { progress: () => ALL_PAGES });
  } finally {
    db.close();
  }
  const copy = new Database(target);
  let users: number;
  try {
    // The copy keeps the source's WAL flag; a rollback journal makes it one self-contained file.
    copy.pragma('journal_mode = DELETE');
    const check = copy.pragma('integrity_check', { simple: true });
    if (check !== 'ok') throw new Error(`the copy fails its integrity check: ${String(check)}`);
    users = copy.prepare<[], number>('SELECT count(*) FROM users').pluck().get() ?? 0;
  } finally {
    copy.close();
  }
  const seconds = ((performance.now() - started) / 1000).toFixed(2);
  const megabytes = (statSync(target).size / 1e6).toFixed(1);
  process.stdout.write(`backup: ${users} users from ${source} to ${target} (${megabytes} MB) in ${seconds} s\n`);
} catch (error) {
  rmSync(target, { force: true });
  fail(`${source} to ${target} failed: ${(error as Error).message}`, 1);
}
