import type pg from 'pg';
import { classify } from './postgres-errors.js';
import { MIGRATIONS_TABLE, MigrationError, type Migration } from './migrations.js';

// Any constant shared by all instances: the one earlier versions took around their CREATE TABLE, so an
// older replica starting beside a newer one waits for its migrations too.
const SCHEMA_LOCK = 5_000_001;

const createRecords = `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE} (
  version integer PRIMARY KEY,
  name text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now()
)`;

/**
 * Applies the migrations not yet recorded, in version order, on a client of its own: under a session
 * advisory lock, so that replicas starting together wait for each other and each migration runs once;
 * each in a transaction with its record, so a failure leaves it all unapplied (PostgreSQL's DDL is
 * transactional). Returns the names applied. A migration the server refused is a MigrationError;
 * an unavailable database a DatabaseUnavailableError (the caller tries again later).
 */
export async function migratePostgres(client: pg.ClientBase, migrations: Migration[]): Promise<string[]> {
  await client.query('SELECT pg_advisory_lock($1)', [SCHEMA_LOCK]).catch((error: unknown) => Promise.reject(classify(error)));
  try {
    const recorded = await client
      .query(createRecords)
      .then(() => client.query<{ version: number }>(`SELECT version FROM ${MIGRATIONS_TABLE}`))
      .catch((error: unknown) => Promise.reject(classify(error)));
    const done = new Set(recorded.rows.map((row) => row.version));
    const applied: string[] = [];
    for (const migration of migrations.filter((each) => !done.has(each.version))) {
      try {
        await client.query('BEGIN');
        // No parameters: the simple protocol, which runs a file of several statements.
        await client.query(migration.sql);
        await client.query(`INSERT INTO ${MIGRATIONS_TABLE} (version, name) VALUES ($1, $2)`, [migration.version, migration.name]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        const classified = classify(error);
        throw classified === error ? new MigrationError(migration.name, error) : classified;
      }
      applied.push(migration.name);
    }
    return applied;
  } finally {
    // Released with the session too, should this fail.
    await client.query('SELECT pg_advisory_unlock($1)', [SCHEMA_LOCK]).catch(() => undefined);
  }
}
