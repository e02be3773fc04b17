import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StartError } from '@sample-services/kit/run-service';

/** One numbered SQL file of a store's migrations directory, e.g. 0002_email_key.sql. */
export interface Migration {
  version: number;
  /** The file's name without .sql: what the records and the messages show. */
  name: string;
  sql: string;
}

export type Dialect = 'postgres' | 'sqlite';

/** The package's migrations, beside dist and src (shipped with the package: its package.json `files`). */
const MIGRATIONS_ROOT = fileURLToPath(new URL('../migrations/', import.meta.url));

/** Where a store's migrations are read from; tests give another directory. */
export const migrationsDir = (dialect: Dialect): string => join(MIGRATIONS_ROOT, dialect);

/** What a store is told about its migrations. */
export interface MigrationOptions {
  /** The migrations' directory; default the package's (tests give others). */
  migrationsDir?: string;
  /** Told the names of the migrations this store applied (none when another had, or nothing was pending). */
  onMigrated?: (applied: string[]) => void;
}

/** The table recording what was applied, created by the runners before the first migration. */
export const MIGRATIONS_TABLE = 'schema_migrations';

const FILE_NAME = /^(\d{4})_[a-z0-9_]+\.sql$/;

/** The directory's migrations in version order; a file named otherwise or a repeated version is a bug. */
export function readMigrations(dir: string): Migration[] {
  const migrations = readdirSync(dir)
    .filter((file) => file.endsWith('.sql'))
    .map((file): Migration => {
      const match = FILE_NAME.exec(file);
      if (match === null) throw new Error(`migrations: ${join(dir, file)} is not named NNNN_words.sql`);
      return { version: Number(match[1]), name: file.slice(0, -'.sql'.length), sql: readFileSync(join(dir, file), 'utf8') };
    })
    .sort((a, b) => a.version - b.version);
  migrations.forEach((migration, i) => {
    if (i > 0 && migration.version === migrations[i - 1]!.version)
      throw new Error(`migrations: version ${migration.version} is used twice in ${dir}`);
  });
  return migrations;
}

/**
 * A migration the database refused: nothing of it was applied (its transaction was rolled back), and the
 * service must not start on a schema it does not know. The message is the one line the operator sees.
 */
export class MigrationError extends StartError {
  override name = 'MigrationError';
  constructor(
    readonly migration: string,
    cause: unknown,
  ) {
    super(`migration ${migration} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}
