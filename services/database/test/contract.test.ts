import { commonContract } from '@sample-services/testing/contract/common';
import { databaseContract } from '@sample-services/testing/contract/database';
import { temporarySqliteStore, type TemporaryStore } from '@sample-services/testing/temporary-store';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe } from 'vitest';
import { createDatabaseApp } from '../src/app.js';

describe('variant B in-process on a SQLite file, listening on an ephemeral port', () => {
  let database: TemporaryStore;
  let app: FastifyInstance;
  let baseUrl: string;
  beforeAll(async () => {
    database = temporarySqliteStore();
    app = createDatabaseApp({ logger: false, store: database.store });
    baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await app.close();
    database.remove();
  });

  databaseContract(() => baseUrl);
  commonContract(() => baseUrl);
});
