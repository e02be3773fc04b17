import { createBackendApp } from '@sample-services/backend/app';
import { commonContract } from '@sample-services/testing/contract/common';
import { frontendContract } from '@sample-services/testing/contract/frontend';
import { temporarySqliteStore, type TemporaryStore } from '@sample-services/testing/temporary-store';
import type { User } from '@sample-services/users-api/schemas';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createFrontendApp } from '../src/app.js';
import { createBackendClient } from '../src/backend-client.js';

describe('variant C frontend in-process, in front of an in-process backend on a SQLite file', () => {
  const seeded: User[] = [];
  let database: TemporaryStore;
  let backend: FastifyInstance;
  let frontend: FastifyInstance;
  let backendUrl: string;
  let frontendUrl: string;
  beforeAll(async () => {
    database = temporarySqliteStore();
    seeded.push(await database.store.create({ name: 'John Doe', email: 'john@example.com' }));
    backend = createBackendApp({ logger: false, store: database.store });
    backendUrl = await backend.listen({ port: 0, host: '127.0.0.1' });
    frontend = createFrontendApp({
      logger: false,
      backend: createBackendClient({ url: new URL(backendUrl), timeoutMs: 5_000, log: pino({ enabled: false }) }),
    });
    frontendUrl = await frontend.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await frontend.close();
    await backend.close();
    database.remove();
  });

  frontendContract(
    () => frontendUrl,
    () => backendUrl,
    {
      ensureUsers: async (count) => {
        while (seeded.length < count)
          seeded.push(await database.store.create({ name: `Seeded ${seeded.length}`, email: `seeded${seeded.length}@example.com` }));
      },
    },
  );
  commonContract(() => frontendUrl);

  it('forwards the seeded users', async () => {
    expect(await (await fetch(`${frontendUrl}/api/users`)).json()).toEqual(seeded);
  });
});
