import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from 'node:worker_threads';
import { afterAll, describe, expect, it } from 'vitest';
import { createSqliteStore } from '../src/sqlite-store.js';
import { DatabaseUnavailableError, type UserStore } from '../src/user-store.js';
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

describe('SQLite adapter: its writer thread', () => {
  const dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-writer-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('fails the creates it held as unavailable when it dies, and is started again for the next', async () => {
    const writers: Worker[] = [];
    const dataDir = join(dir, 'crash');
    // The first writer dies with a batch posted to it and not answered.
    const store = createSqliteStore(dataDir, { onWriterStart: (worker) => writers.push(worker) === 1 && void worker.terminate() });
    try {
      const results = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.create({ name: `Lost ${i}`, email: `lost${i}@example.com` })),
      );
      for (const result of results) expect(result).toMatchObject({ status: 'rejected', reason: expect.any(DatabaseUnavailableError) });
      expect(((results[0] as PromiseRejectedResult).reason as Error).message).toMatch(/the SQLite writer thread stopped/);
      expect(await store.ping(1_000)).toBe(true);
      const after = await store.create({ name: 'After', email: 'after@example.com' });
      expect(writers).toHaveLength(2);
      expect(await listAll(store)).toEqual([after]);
    } finally {
      await store.close();
    }
  });

  it('is started by the first probe, which answers without waiting for its boot; later probes wait for it', async () => {
    const online: boolean[] = [];
    const store = createSqliteStore(join(dir, 'probe'), {
      onWriterStart: (worker) => {
        const index = online.push(false) - 1;
        worker.once('online', () => (online[index] = true));
      },
    });
    try {
      expect(online).toEqual([]);
      expect(await store.ping(1_000)).toBe(true);
      expect(online).toEqual([false]);
      expect(await store.ping(1_000)).toBe(true);
      expect(online).toEqual([true]);
    } finally {
      await store.close();
    }
  });

  it('makes every probe after the first report the database disconnected when it cannot run', async () => {
    const store = createSqliteStore(join(dir, 'broken'), { onWriterStart: (worker) => void worker.terminate() });
    try {
      expect(await store.ping(1_000)).toBe(true);
      expect(await store.ping(1_000)).toBe(false);
      expect(await store.ping(1_000)).toBe(false);
    } finally {
      await store.close();
    }
  });

  it('ends with close(), which leaves the file whole without its -wal', async () => {
    const exits: Promise<unknown[]>[] = [];
    const dataDir = join(dir, 'close');
    const store = createSqliteStore(dataDir, { onWriterStart: (worker) => exits.push(once(worker, 'exit')) });
    await store.create({ name: 'One', email: 'one@example.com' });
    await store.close();
    expect(exits).toHaveLength(1);
    expect(await exits[0]).toEqual([0]);
    expect(existsSync(join(dataDir, 'app.db-wal'))).toBe(false);
  });
});
