import { listAll } from './store-suite.js';
import { afterAll, describe, expect, it } from 'vitest';
import { createPostgresStore } from '../src/postgres-store.js';
import { DatabaseUnavailableError } from '../src/user-store.js';
import { startSilentServer, usePostgres } from '@sample-services/testing/postgres';

describe('PostgreSQL adapter when the database hangs', () => {
  it('reports the probe as failed within its bound and fails data calls as unavailable', async () => {
    const silent = await startSilentServer();
    const store = createPostgresStore(silent.url, { connectTimeoutMs: 500 });
    try {
      const started = Date.now();
      expect(await store.ping(300)).toBe(false);
      expect(Date.now() - started).toBeLessThan(1_500); // a bound demanded by the health check, with a wide margin
      await expect(listAll(store)).rejects.toBeInstanceOf(DatabaseUnavailableError);
      await expect(store.create({ name: 'A', email: 'a@b.c' })).rejects.toBeInstanceOf(DatabaseUnavailableError);
    } finally {
      await store.close();
      await silent.close();
    }
  });

  it('gives the failure of a shared page query to every reader waiting for it', async () => {
    const silent = await startSilentServer();
    const store = createPostgresStore(silent.url, { connectTimeoutMs: 300 });
    try {
      const readers = await Promise.allSettled(Array.from({ length: 20 }, () => store.page(0, 100)));
      for (const reader of readers) expect(reader).toMatchObject({ status: 'rejected', reason: expect.any(DatabaseUnavailableError) });
    } finally {
      await store.close();
      await silent.close();
    }
  });

  it('fails data calls as unavailable when nothing listens', async () => {
    const silent = await startSilentServer();
    await silent.close(); // its port is now closed
    const store = createPostgresStore(silent.url);
    try {
      await expect(listAll(store)).rejects.toBeInstanceOf(DatabaseUnavailableError);
      expect(await store.ping(1_000)).toBe(false);
    } finally {
      await store.close();
    }
  });
});

const postgres = await usePostgres(true);

describe.skipIf(postgres === undefined)('PostgreSQL adapter when the server stops and comes back', () => {
  afterAll(() => postgres?.destroy());

  it('fails fast while the server is down and recovers by itself once it is back', async () => {
    const errors: Error[] = [];
    const store = createPostgresStore(await postgres!.createDatabase(), { onIdleError: (error) => errors.push(error) });
    try {
      const kept = await store.create({ name: 'Before', email: 'before@example.com' });
      await postgres!.stop();
      expect(await store.ping(1_000)).toBe(false);
      await expect(listAll(store)).rejects.toBeInstanceOf(DatabaseUnavailableError);
      // A batch of creates fails as a whole, each of its creates as unavailable (503).
      const during = await Promise.allSettled(
        Array.from({ length: 5 }, (_, i) => store.create({ name: 'During', email: `during${i}@example.com` })),
      );
      for (const result of during) expect(result).toMatchObject({ status: 'rejected', reason: expect.any(DatabaseUnavailableError) });
      await postgres!.start();
      expect(await store.ping(1_000)).toBe(true);
      const after = await Promise.all(Array.from({ length: 5 }, (_, i) => store.create({ name: 'After', email: `after${i}@example.com` })));
      expect(await listAll(store)).toEqual([kept, ...after]);
      // The idle connection cut by the shutdown was reported, not thrown.
      expect(errors.length).toBeGreaterThan(0);
    } finally {
      await store.close();
    }
  });

  it('creates the table once the database is reachable when it was down at first', async () => {
    const url = await postgres!.createDatabase();
    await postgres!.stop();
    const store = createPostgresStore(url);
    try {
      await expect(store.init()).rejects.toBeInstanceOf(DatabaseUnavailableError);
      await postgres!.start();
      expect(await listAll(store)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
