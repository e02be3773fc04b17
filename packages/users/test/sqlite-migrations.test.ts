import { mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { emailKey } from '@sample-services/users-api/email-key';
import { createSqliteStore, SQLITE_FILE } from '../src/sqlite-store.js';
import { DuplicateEmailError } from '../src/user-store.js';
import { migrationsDir } from '../src/migrations.js';
import {
  beforeMigrations,
  collidingUsers,
  collisionMessage,
  collisionMessageOf,
  fixtureUsers,
  migrationsUpTo,
  migrationsWith,
} from './migration-dirs.js';
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
    const only0001 = migrationsUpTo('sqlite', 1);
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

  describe('0003 makes email_key required of every writer', () => {
    const refusal =
      'users.email_key must hold the e-mail in Unicode NFC, then lower case, as the service writes it: ' +
      'give it with every INSERT, and with every UPDATE of the e-mail';

    /** A file at 0002 (the fixture upgraded by the service of then) to which `sql` was then done by another program. */
    async function at0002Then(name: string, sql: string): Promise<string> {
      const dir = dataDirWith(name, beforeMigrations('sqlite'));
      const upTo0002 = migrationsUpTo('sqlite', 2);
      await createSqliteStore(dir, { migrationsDir: upTo0002 }).close();
      rmSync(upTo0002, { recursive: true });
      // Another program's connection: none of the functions the runner registers.
      const db = new Database(join(dir, SQLITE_FILE));
      db.exec(sql);
      db.close();
      return dir;
    }

    /** Every row as stored, key included, read without the store. */
    function rowsOf(dir: string): unknown[] {
      const db = new Database(join(dir, SQLITE_FILE), { readonly: true });
      try {
        return db.prepare('SELECT id, name, email, email_key, created_at FROM users ORDER BY id').all();
      } finally {
        db.close();
      }
    }

    it("refuses another program's writes that leave the key out, or stale, with what to do; the table unchanged", async () => {
      const dir = dataDirWith('guarded', beforeMigrations('sqlite'));
      await createSqliteStore(dir).close();
      const before = rowsOf(dir);
      const db = new Database(join(dir, SQLITE_FILE));
      const refused = [
        "INSERT INTO users (name, email) VALUES ('Alice', 'ALICE@example.com')",
        "INSERT INTO users (name, email, email_key) VALUES ('Alice', 'ALICE@example.com', NULL)",
        "INSERT INTO users (name, email) VALUES ('Zoë', 'ZOË@example.org')",
        // An ASCII e-mail's key is checked: its lower case.
        "INSERT INTO users (name, email, email_key) VALUES ('Alice', 'ALICE@example.com', 'ALICE@example.com')",
        'UPDATE users SET email_key = NULL WHERE id = 3',
        "UPDATE users SET email = 'Zoë@example.org', email_key = NULL WHERE id = 2",
        "UPDATE users SET email = 'bobby@example.com' WHERE id = 3",
        // Any other e-mail's key must change with it.
        "UPDATE users SET email = 'Zoë@example.org' WHERE id = 2",
      ];
      try {
        for (const sql of refused) {
          expect(() => db.exec(sql), sql).toThrow(expect.objectContaining({ message: refusal, code: 'SQLITE_CONSTRAINT_TRIGGER' }));
        }
        expect(rowsOf(dir)).toEqual(before);
        // Writes that give the key as the service would are taken.
        db.exec("INSERT INTO users (name, email, email_key) VALUES ('Alice', 'ALICE@example.com', 'alice@example.com')");
        db.exec("UPDATE users SET email = 'BOB@example.com' WHERE id = 3");
        db.exec("UPDATE users SET email = 'Zoë@example.org', email_key = 'zoë@example.org' WHERE id = 2");
      } finally {
        db.close();
      }
      const store = createSqliteStore(dir);
      try {
        await expect(store.create({ name: 'Alice again', email: 'alice@EXAMPLE.com' })).rejects.toThrow(DuplicateEmailError);
        const created = await store.create({ name: 'Eve again', email: 'EVE@example.NET.uk' });
        expect((await listAll(store)).at(-1)).toEqual(created);
      } finally {
        await store.close();
      }
    });

    it('fills the key of rows written without it since 0002, keeping every row, without copying the table', async () => {
      const dir = await at0002Then(
        'keyless',
        "INSERT INTO users (name, email) VALUES ('Ann', 'ANN@Example.com'), ('José', 'JOSE\u0301@example.com')",
      );
      const rootpage = (): unknown => {
        const db = new Database(join(dir, SQLITE_FILE), { readonly: true });
        const page = db.prepare("SELECT rootpage FROM sqlite_schema WHERE name = 'users'").pluck().get();
        db.close();
        return page;
      };
      const table = rootpage();
      const before = rowsOf(dir) as { email: string; email_key: string | null }[];
      expect(before.filter((row) => row.email_key === null).map((row) => row.email)).toEqual(['ANN@Example.com', 'JOSE\u0301@example.com']);
      const store = createSqliteStore(dir);
      try {
        expect(schemaOf(dir).records).toEqual(versions);
        expect(rowsOf(dir)).toEqual(before.map((row) => ({ ...row, email_key: emailKey(row.email) })));
        expect(rootpage()).toBe(table);
        await expect(store.create({ name: 'Ann again', email: 'ann@example.com' })).rejects.toThrow(DuplicateEmailError);
        await expect(store.create({ name: 'José again', email: 'jos\u00e9@EXAMPLE.com' })).rejects.toThrow(DuplicateEmailError);
      } finally {
        await store.close();
      }
    });

    it('stops naming the rows written without their key since 0002 that collide, leaving the file as it was', async () => {
      const dir = await at0002Then('keyless-colliding', collidingUsers);
      const before = schemaOf(dir);
      const rows = rowsOf(dir);
      expect(() => createSqliteStore(dir)).toThrow(collisionMessageOf('0003_email_key_required'));
      expect(schemaOf(dir)).toEqual(before);
      expect(before.records).toEqual(['0001_users', '0002_email_key']);
      expect(rowsOf(dir)).toEqual(rows);
    });
  });
});
