import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { walkPages } from '@sample-services/testing/contract/pagination';
import type { ListedUser } from '@sample-services/testing/contract/users';
import { addUsersToPostgres, addUsersToSqlite, countListedUsers } from '@sample-services/testing/many-users';
import { usePostgres } from '@sample-services/testing/postgres';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

const postgres = await usePostgres(true);
const dataDirs: string[] = [];
afterAll(async () => {
  await postgres?.destroy();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

const MILLION = 1_000_000;

/** The process's peak resident memory (VmHWM), in MB. */
const peakRssMb = (pid: number): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

interface Database {
  name: string;
  /** A fresh empty database and the environment that points the service at it. */
  create: () => Promise<{ env: NodeJS.ProcessEnv; add: (count: number, from?: number) => Promise<void> }>;
}

const databases: Database[] = [
  {
    name: 'SQLite',
    create: async () => {
      const dataDir = mkdtempSync(join(tmpdir(), 'svc-size-'));
      dataDirs.push(dataDir);
      return { env: { DATA_DIR: dataDir }, add: (count, from) => addUsersToSqlite(dataDir, count, from) };
    },
  },
  ...(postgres === undefined
    ? []
    : [
        {
          name: 'PostgreSQL',
          create: async () => {
            const url = await postgres.createDatabase();
            return { env: { DATABASE_URL: url }, add: (count: number, from?: number) => addUsersToPostgres(url, count, from) };
          },
        },
      ]),
];

describe.each(databases)('variant B at real size on $name', ({ create }) => {
  let service: ServiceProcess;
  let base: Awaited<ReturnType<Database['create']>>;
  beforeAll(async () => {
    base = await create();
    await base.add(MILLION);
    // A heap of 64 MB: a list that was buffered (100 MB of JSON, far more as objects) could not be answered.
    service = await startService('database', { ...base.env, NODE_OPTIONS: '--max-old-space-size=64' });
  }, 120_000);
  afterAll(() => service?.stop());

  it('lists a million users in a 64 MB heap, streamed: every user once, a complete array, never holding the event loop', async () => {
    // prom-client's event-loop monitor starts with the first scrape; its maximum is over the time since the one before.
    await (await fetch(`${service.baseUrl}/metrics`)).text();
    const listed = await countListedUsers(`${service.baseUrl}/api/users`);
    const metrics = await (await fetch(`${service.baseUrl}/metrics`)).text();
    const heldSeconds = Number(/^nodejs_eventloop_lag_max_seconds (\S+)$/m.exec(metrics)?.[1]);
    // Half of load shedding's 1 s: a list that held the loop longer made the service shed every other request.
    expect(heldSeconds).toBeLessThan(0.5);
    expect(listed).toMatchObject({ status: 200, users: MILLION, complete: true });
    expect(listed.headers['transfer-encoding']).toBe('chunked');
    expect(listed.headers['content-type']).toBe('application/json; charset=utf-8');
    console.log(`${MILLION} users: ${(listed.bytes / 1e6).toFixed(0)} MB; service peak RSS ${peakRssMb(service.pid).toFixed(0)} MB`);
  }, 120_000);

  it('answers 100,000 users after an id as one valid JSON array, ids strictly increasing', async () => {
    const res = await fetch(`${service.baseUrl}/api/users?after=${MILLION - 100_000}`);
    expect(res.status).toBe(200);
    const users = (await res.json()) as ListedUser[];
    expect(users).toHaveLength(100_000);
    expect(users[0]).toMatchObject({ id: MILLION - 100_000 + 1, name: `User ${MILLION - 100_000 + 1}` });
    expect(users.every((user, i) => i === 0 || user.id > users[i - 1]!.id)).toBe(true);
    expect(Object.keys(users[0]!)).toEqual(['id', 'name', 'email', 'created_at']);
  }, 60_000);

  it('pages through the table to the end while users are created: no user twice, none that was there missing', async () => {
    const lastBefore = MILLION;
    let creating = true;
    let created = 0;
    const creator = (async () => {
      while (creating) {
        const res = await fetch(`${service.baseUrl}/api/users`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: `Concurrent ${created}`, email: `concurrent${created}@example.com` }),
        });
        expect(res.status).toBe(201);
        created += 1;
      }
    })();
    try {
      const { users } = await walkPages(service.baseUrl, `/api/users?limit=1000&after=${lastBefore - 20_000}`);
      const ids = users.map((user) => user.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids.every((id, i) => i === 0 || id > ids[i - 1]!)).toBe(true);
      expect(ids.filter((id) => id <= lastBefore)).toEqual(Array.from({ length: 20_000 }, (_, i) => lastBefore - 20_000 + 1 + i));
    } finally {
      creating = false;
      await creator;
    }
    expect(created).toBeGreaterThan(0);
  }, 60_000);
});

describe.skipIf(postgres === undefined)('variant B when PostgreSQL stops in the middle of a long list', () => {
  let service: ServiceProcess;
  beforeAll(async () => {
    const url = await postgres!.createDatabase();
    await addUsersToPostgres(url, 300_000);
    service = await startService('database', { DATABASE_URL: url });
  }, 60_000);
  afterAll(() => service?.stop());

  it('cuts the response, never ending it as a shorter valid array, logs why, and lists again once the database is back', async () => {
    // The client stops reading after the first bytes; the database stops meanwhile. The cut can
    // reach the client before pg_ctl has finished stopping (the service's batch query is ended
    // first): the stop is awaited before anything else, or starting again finds it still running.
    let stopped: Promise<void> | undefined;
    const listed = await countListedUsers(`${service.baseUrl}/api/users`, () => (stopped = postgres!.stop()));
    try {
      await stopped;
      expect(listed.status).toBe(200);
      expect(listed.complete).toBe(false);
      expect(listed.error).toBeDefined();
      expect(listed.users).toBeGreaterThan(0);
      expect(listed.users).toBeLessThan(300_000);
      await expect.poll(() => service.lines.filter((line) => line.includes('"level":50')).join('\n')).toMatch(/database unavailable/);
      const res = await fetch(`${service.baseUrl}/api/users?limit=1`);
      expect(res.status).toBe(503);
    } finally {
      await postgres!.start();
    }
    expect(await countListedUsers(`${service.baseUrl}/api/users`)).toMatchObject({ status: 200, users: 300_000, complete: true });
  }, 60_000);
});
