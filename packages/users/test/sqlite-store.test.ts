import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore, DatabaseUnavailableError, type UserStore } from '../src/index.js';
import { listAll, storeSuite } from './store-suite.js';

describe('SQLite adapter', () => {
  const dirs: string[] = [];
  const dirOf = new Map<UserStore, string>();
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  storeSuite(
    async (options) => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-'));
      dirs.push(dir);
      const store = createSqliteStore(join(dir, 'nested', 'data'), options);
      dirOf.set(store, join(dir, 'nested', 'data'));
      return store;
    },
    async (store) => createSqliteStore(dirOf.get(store)!),
  );
});

describe('SQLite adapter: its file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-file-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('is left whole by close(), without its -wal', async () => {
    const dataDir = join(dir, 'close');
    const store = createSqliteStore(dataDir);
    const user = await store.create({ name: 'One', email: 'one@example.com' });
    expect(existsSync(join(dataDir, 'app.db-wal'))).toBe(true);
    await store.close();
    expect(existsSync(join(dataDir, 'app.db-wal'))).toBe(false);
    const reopened = createSqliteStore(dataDir);
    try {
      expect(await listAll(reopened)).toEqual([user]);
    } finally {
      await reopened.close();
    }
  });

  it('fails a batch as unavailable while another process holds the write lock, and writes once it is free', async () => {
    const dataDir = join(dir, 'locked');
    const store = createSqliteStore(dataDir);
    const other = new Database(join(dataDir, 'app.db'));
    other.pragma('busy_timeout = 0');
    try {
      other.exec('BEGIN IMMEDIATE');
      const results = await Promise.allSettled([0, 1].map((i) => store.create({ name: `L${i}`, email: `l${i}@example.com` })));
      for (const result of results) expect(result).toMatchObject({ status: 'rejected', reason: expect.any(DatabaseUnavailableError) });
      other.exec('COMMIT');
      expect(await store.create({ name: 'After', email: 'after@example.com' })).toMatchObject({ name: 'After' });
    } finally {
      other.close();
      await store.close();
    }
  });
});
