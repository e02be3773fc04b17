import { commonContract } from '@sample-services/testing/contract/common';
import { backendContract } from '@sample-services/testing/contract/backend';
import { temporarySqliteStore, type TemporaryStore } from '@sample-services/testing/temporary-store';
import type { User } from '@sample-services/users-api/schemas';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe } from 'vitest';
import { createBackendApp } from '../src/app.js';

describe('variant C backend in-process on a SQLite file, listening on an ephemeral port', () => {
  const seeded: User[] = [];
  let database: TemporaryStore;
  let app: FastifyInstance;
  let baseUrl: string;
  beforeAll(async () => {
    database = temporarySqliteStore();
    // The backend has no create operation: users are written beside it, as another service would.
    seeded.push(await database.store.create({ name: 'John Doe', email: 'john@example.com' }));
    seeded.push(await database.store.create({ name: 'Jane Smith', email: 'jane@example.com' }));
    app = createBackendApp({ logger: false, store: database.store });
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app.close();
    database.remove();
  });

  backendContract(() => baseUrl, {
    users: seeded,
    ensureUsers: async (count) => {
      while (seeded.length < count)
        seeded.push(await database.store.create({ name: `Seeded ${seeded.length}`, email: `seeded${seeded.length}@example.com` }));
    },
  });
  commonContract(() => baseUrl);
});
