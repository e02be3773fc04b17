import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { migrationsDir, type Dialect } from '../src/migrations.js';

/** The package's migrations of `dialect` and the extra files given (name to SQL), in a new directory. */
export function migrationsWith(dialect: Dialect, extra: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), `svc-migrations-${dialect}-`));
  cpSync(migrationsDir(dialect), dir, { recursive: true });
  for (const [name, sql] of Object.entries(extra)) writeFileSync(join(dir, name), sql);
  return dir;
}

/** The package's migrations of `dialect` up to `version`, in a new directory: a database left at that version. */
export function migrationsUpTo(dialect: Dialect, version: number): string {
  const dir = migrationsWith(dialect, {});
  for (const file of readdirSync(dir)) if (Number(file.slice(0, 4)) > version) rmSync(join(dir, file));
  return dir;
}

/** The SQL that made a database of the version before migrations, with users in it (fixtures/). */
export const beforeMigrations = (dialect: Dialect): string =>
  readFileSync(new URL(`./fixtures/${dialect}-before-migrations.sql`, import.meta.url), 'utf8');

/** The users of that fixture, as a store lists them after the upgrade. */
export const fixtureUsers = [
  { id: 2, name: 'Zoë 李', email: 'zoe@example.org', created_at: '2025-06-07T08:09:10.111Z' },
  { id: 3, name: 'Bob', email: 'Bob@Example.com', created_at: '2026-11-01T00:00:00.000Z' },
  { id: 4, name: 'Eve', email: 'eve@example.net', created_at: '2026-11-02T12:00:00.999Z' },
];

/**
 * Users whose e-mails collide under 0002's rule, added to that fixture (ids 5 to 7), and the message of the
 * migration that finds them (0002, or 0003 when they were added without their key after 0002).
 */
export const collidingUsers = `INSERT INTO users (name, email) VALUES
  ('Bob again', 'bob@example.com'), ('José', 'jos\u00e9@example.com'), ('José decomposed', 'jose\u0301@example.com');`;
export const collisionMessageOf = (migration: string): string =>
  `migration ${migration} failed: e-mails that differ only in case or Unicode normalization: ` +
  'Bob@Example.com, bob@example.com (ids 3, 5); jos\u00e9@example.com, jose\u0301@example.com (ids 6, 7); ' +
  'keep one of each (change or delete the others) and start again';
export const collisionMessage = collisionMessageOf('0002_email_key');
