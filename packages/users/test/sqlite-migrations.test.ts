import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore, SQLITE_FILE } from '../src/index.js';
import { migrationsDir } from '../src/migrations.js';
import { beforeMigrations, collidingUsers, collisionMessage, fixtureUsers, migrationsWith } from './migration-dirs.js';
import { listAll } from './store-suite.js';

const root = mkdtempSync(join(tmpdir(), 'svc-sqlite-migrations-'));
afterAll(() => rmSync(root, { recursive: true, force: true }));
const versions = readdirSync(migrationsDir('sqlite')).map((file) => file.slice(0, -'.sql'.length));

/** A new data directory whose file holds `sql`. */
function dataDirWith(name: string, sql: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  const db = new Database(join(dir, SQLITE_FILE));
  db.exec(sql);
  db.close();
  return dir;
}

/** The file's tables and indexes, and the migrations recorded, read without the store. */
function schemaOf(dir: string): { schema: unknown[]; records: string[] } {
  const db = new Database(join(dir, SQLITE_FILE), { readonly: true });
  try {
    const schema = db.prepare("SELECT type, name, sql FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name").all();
    const hasRecords = schema.some((row) => (row as { name: string }).name === 'schema_migrations');
    const records = hasRecords ? db.prepare<[], string>('SELECT name FROM schema_migrations ORDER BY version').pluck().all() : [];
    return { schema, records };
  } finally {
    db.close();
  }
}

describe('SQLite migrations', () => {
  it('applies every migration once to a new file and records each', async () => {
    const dir = join(root, 'new');
    const store = createSqliteStore(dir);
    await store.close();
    const again = createSqliteStore(dir);
    await again.close();
    expect(schemaOf(dir).records).toEqual(versions);
  });

  it('upgrades a file of the version before migrations keeping every user, ids and creation times included', async () => {
    const dir = dataDirWith('old', beforeMigrations('sqlite'));
    const store = createSqliteStore(dir);
    try {
      expect(await listAll(store)).toEqual(fixtureUsers);
      expect((await store.create({ name: 'New', email: 'new@example.com' })).id).toBe(5);
      expect(schemaOf(dir).records).toEqual(versions);
    } finally {
      await store.close();
    }
  });

  it('leaves the schema and the records as they were when a migration fails, and names it', async () => {
    const dir = dataDirWith('failing', beforeMigrations('sqlite'));
    await createSqliteStore(dir).close();
    const before = schemaOf(dir);
    const failing = migrationsWith('sqlite', {
      '0900_broken.sql': 'CREATE TABLE half (x INTEGER); ALTER TABLE users ADD COLUMN half TEXT; INSERT INTO nowhere VALUES (1);',
    });
    expect(() => createSqliteStore(dir, { migrationsDir: failing })).toThrow(/^migration 0900_broken failed: no such table: nowhere$/);
    expect(schemaOf(dir)).toEqual(before);
    rmSync(failing, { recursive: true });
  });

  it('stops 0002 naming the e-mails that collide under its rule, leaving the file as it was', async () => {
    const dir = dataDirWith('colliding', beforeMigrations('sqlite') + collidingUsers);
    const only0001 = migrationsWith('sqlite', {});
    rmSync(join(only0001, '0002_email_key.sql'));
    await createSqliteStore(dir, { migrationsDir: only0001 }).close();
    rmSync(only0001, { recursive: true });
    const before = schemaOf(dir);
    expect(() => createSqliteStore(dir)).toThrow(collisionMessage);
    expect(schemaOf(dir)).toEqual(before);
    expect(before.records).toEqual(['0001_users']);
    const db = new Database(join(dir, SQLITE_FILE), { readonly: true });
    expect(db.prepare<[], number>('SELECT id FROM users ORDER BY id').pluck().all()).toEqual([2, 3, 4, 5, 6, 7]);
    db.close();
  });
});
