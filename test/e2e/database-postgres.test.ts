import { createPostgresStore } from '@sample-services/users/postgres-store';
import type { User } from '@sample-services/users-api/schemas';
import type { UserStore } from '@sample-services/users/user-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendContract } from '@sample-services/testing/contract/backend';
import { commonContract } from '@sample-services/testing/contract/common';
import { databaseContract } from '@sample-services/testing/contract/database';
import { fetchUserList } from '@sample-services/testing/contract/users';
import { usePostgres } from '@sample-services/testing/postgres';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

const postgres = await usePostgres();

async function createUser(baseUrl: string, name: string, email: string): Promise<Response> {
  return fetch(`${baseUrl}/api/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name, email }),
  });
}

describe.skipIf(postgres === undefined)('variant B as a real process on PostgreSQL', () => {
  afterAll(() => postgres?.destroy());

  describe('contract', () => {
    let service: ServiceProcess;
    beforeAll(async () => {
      service = await startService('database', { DATABASE_URL: await postgres!.createDatabase() });
    });
    afterAll(() => service.stop());

    databaseContract(() => service.baseUrl);
    commonContract(() => service.baseUrl);

    it('answers every client of a shared list query, whichever of the others go away meanwhile', async () => {
      const url = `${service.baseUrl}/api/users`;
      const fresh = await (await fetch(url)).text();
      for (let round = 0; round < 5; round += 1) {
        const clients = Array.from({ length: 30 }, () => new AbortController());
        const bodies = clients.map((client) => fetch(url, { signal: client.signal }).then((res) => res.text()));
        setImmediate(() => clients.forEach((client, i) => i % 3 === 0 && client.abort()));
        const results = await Promise.allSettled(bodies);
        // The ones that went away may have been answered before they did; every other one was.
        for (const [i, result] of results.entries()) if (i % 3 !== 0) expect(result).toEqual({ status: 'fulfilled', value: fresh });
      }
    });

    it('logs where the users are stored, without the password', () => {
      const stored = service.lines.find((l) => l.includes('users stored in'));
      expect(stored).toMatch(/"users stored in PostgreSQL at 127\.0\.0\.1:\d+\/test_\w+"/);
    });
  });

  describe('the backend of C on PostgreSQL', () => {
    const seeded: User[] = [];
    let backend: ServiceProcess;
    let store: UserStore;
    beforeAll(async () => {
      const url = await postgres!.createDatabase();
      store = createPostgresStore(url);
      seeded.push(await store.create({ name: 'John Doe', email: 'john@example.com' }));
      backend = await startService('backend', { DATABASE_URL: url });
    });
    afterAll(async () => {
      await store.close();
      await backend.stop();
    });

    backendContract(() => backend.baseUrl, {
      users: seeded,
      ensureUsers: async (count) => {
        while (seeded.length < count)
          seeded.push(await store.create({ name: `Seeded ${seeded.length}`, email: `seeded${seeded.length}@example.com` }));
      },
    });
  });

  it('keeps the users when the process is stopped and started again', async () => {
    const url = await postgres!.createDatabase();
    const first = await startService('database', { DATABASE_URL: url });
    const created = await (await createUser(first.baseUrl, 'Kept', 'kept@example.com')).text();
    expect(await first.stop()).toBe(0);
    const second = await startService('database', { DATABASE_URL: url });
    try {
      expect((await fetchUserList(second.baseUrl)).text).toBe(`[${created}]`);
    } finally {
      await second.stop();
    }
  });

  it('lets two instances start at once on a new database and share its table', async () => {
    const url = await postgres!.createDatabase();
    const [a, b] = await Promise.all([startService('database', { DATABASE_URL: url }), startService('database', { DATABASE_URL: url })]);
    try {
      expect(a.lines.concat(b.lines).filter((l) => l.includes('not reachable'))).toEqual([]);
      const created = await (await createUser(a.baseUrl, 'Shared', 'shared@example.com')).text();
      expect((await fetchUserList(b.baseUrl)).text).toBe(`[${created}]`);
      expect((await createUser(b.baseUrl, 'Again', 'shared@example.com')).status).toBe(409);
    } finally {
      await Promise.all([a.stop(), b.stop()]);
    }
  });
});
