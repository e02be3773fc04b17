import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { usePostgres } from '@sample-services/testing/postgres';
import { createPostgresStore } from '../src/postgres-store.js';
import { migrationsDir, MigrationError } from '../src/migrations.js';
import { beforeMigrations, collidingUsers, collisionMessage, fixtureUsers, migrationsWith } from './migration-dirs.js';
import { listAll } from './store-suite.js';

const postgres = await usePostgres();
const versions = readdirSync(migrationsDir('postgres')).map((file) => file.slice(0, -'.sql'.length));

/** The rows of `text` on the database, as another application would read them. */
async function sql<Row>(url: string, text: string): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(text)).rows as Row[];
  } finally {
    await client.end();
  }
}

/** The public schema's tables, columns and indexes, and the migrations recorded. */
async function schemaOf(url: string): Promise<{ columns: unknown[]; indexes: unknown[]; records: string[] }> {
  const columns = await sql(
    url,
    "SELECT table_name, column_name, data_type FROM information_schema.columns WHERE table_schema = 'public' ORDER BY 1, 2",
  );
  const indexes = await sql(url, "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY 1");
  const records = await sql<{ name: string }>(url, 'SELECT name FROM schema_migrations ORDER BY version').catch(() => []);
  return { columns, indexes, records: records.map((row) => row.name) };
}

describe.skipIf(postgres === undefined)('PostgreSQL migrations', () => {
  afterAll(() => postgres?.destroy());

  it('applies each migration exactly once when three stores start at once on an empty database', async () => {
    const url = await postgres!.createDatabase();
    // Fails if run twice: the table exists then.
    const dir = migrationsWith('postgres', { '0900_once.sql': 'CREATE TABLE once (x integer); INSERT INTO once VALUES (1);' });
    const stores = Array.from({ length: 3 }, () => createPostgresStore(url, { migrationsDir: dir }));
    try {
      await Promise.all(stores.map((store) => store.init()));
      const records = await sql<{ version: number; name: string }>(url, 'SELECT version, name FROM schema_migrations ORDER BY version');
      expect(records.map((row) => row.name)).toEqual([...versions, '0900_once']);
      expect(await sql(url, 'SELECT x FROM once')).toEqual([{ x: 1 }]);
    } finally {
      await Promise.all(stores.map((store) => store.close()));
      rmSync(dir, { recursive: true });
    }
  });

  it('upgrades a database of the version before migrations keeping every user, ids and creation times included', async () => {
    const url = await postgres!.createDatabase();
    await sql(url, beforeMigrations('postgres'));
    const store = createPostgresStore(url);
    try {
      await store.init();
      expect(await listAll(store)).toEqual(fixtureUsers);
      expect((await store.create({ name: 'New', email: 'new@example.com' })).id).toBe(5);
      expect((await schemaOf(url)).records).toEqual(versions);
    } finally {
      await store.close();
    }
  });

  it('leaves the schema and the records as they were when a migration fails, names it, and tries it again on the next call', async () => {
    const url = await postgres!.createDatabase();
    await sql(url, beforeMigrations('postgres'));
    const plain = createPostgresStore(url);
    await plain.init();
    await plain.close();
    const before = await schemaOf(url);
    const dir = migrationsWith('postgres', {
      '0900_broken.sql': 'CREATE TABLE half (x integer); ALTER TABLE users ADD COLUMN half text; INSERT INTO nowhere VALUES (1);',
    });
    const store = createPostgresStore(url, { migrationsDir: dir });
    try {
      const error: unknown = await store.init().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect((error as Error).message).toBe('migration 0900_broken failed: relation "nowhere" does not exist');
      expect(await schemaOf(url)).toEqual(before);
      await expect(store.init()).rejects.toBeInstanceOf(MigrationError);
      expect(await sql(url, 'SELECT id FROM users ORDER BY id')).toEqual(fixtureUsers.map(({ id }) => ({ id })));
    } finally {
      await store.close();
      rmSync(dir, { recursive: true });
    }
  });

  it('stops 0002 naming the e-mails that collide under its rule, leaving the database as it was', async () => {
    const url = await postgres!.createDatabase();
    await sql(url, beforeMigrations('postgres') + collidingUsers);
    const only0001 = migrationsWith('postgres', {});
    rmSync(join(only0001, '0002_email_key.sql'));
    const first = createPostgresStore(url, { migrationsDir: only0001 });
    await first.init();
    await first.close();
    rmSync(only0001, { recursive: true });
    const before = await schemaOf(url);
    const store = createPostgresStore(url);
    try {
      const error: unknown = await store.init().catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MigrationError);
      expect((error as Error).message).toBe(collisionMessage);
      expect(await schemaOf(url)).toEqual(before);
      expect(before.records).toEqual(['0001_users']);
      expect(await sql(url, 'SELECT id FROM users ORDER BY id')).toEqual([2, 3, 4, 5, 6, 7].map((id) => ({ id })));
    } finally {
      await store.close();
    }
  });
});
