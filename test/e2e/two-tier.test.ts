import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '@sample-services/users/sqlite-store';
import type { User } from '@sample-services/users-api/schemas';
import type { UserStore } from '@sample-services/users/user-store';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendContract } from '@sample-services/testing/contract/backend';
import { commonContract } from '@sample-services/testing/contract/common';
import { frontendContract } from '@sample-services/testing/contract/frontend';
import { nextLink } from '@sample-services/testing/contract/pagination';
import type { ListedUser } from '@sample-services/testing/contract/users';
import { addUsersToPostgres, addUsersToSqlite, countListedUsers } from '@sample-services/testing/many-users';
import { usePostgres } from '@sample-services/testing/postgres';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

const postgres = await usePostgres();
const dataDirs: string[] = [];
afterAll(async () => {
  await postgres?.destroy();
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

describe('variant C as real processes: backend on SQLite, frontend pointed at it', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-c-'));
  const seeded: User[] = [];
  let store: UserStore;
  let backend: ServiceProcess;
  let frontend: ServiceProcess;
  // The backend has no create operation: users are written beside it, as another service would.
  const ensureUsers = async (count: number): Promise<void> => {
    while (seeded.length < count)
      seeded.push(await store.create({ name: `Seeded ${seeded.length}`, email: `seeded${seeded.length}@example.com` }));
  };

  beforeAll(async () => {
    store = createSqliteStore(dataDir);
    seeded.push(await store.create({ name: 'John Doe', email: 'john@example.com' }));
    seeded.push(await store.create({ name: 'Jane Smith', email: 'jane@example.com' }));
    backend = await startService('backend', { DATA_DIR: dataDir, FLASK_ENV: 'production' });
    frontend = await startService('frontend', { BACKEND_URL: backend.baseUrl });
  });
  afterAll(async () => {
    await frontend.stop();
    await backend.stop();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('backend', () => {
    backendContract(() => backend.baseUrl, { users: seeded, ensureUsers });
    commonContract(() => backend.baseUrl);
  });

  describe('frontend', () => {
    frontendContract(
      () => frontend.baseUrl,
      () => backend.baseUrl,
      { ensureUsers },
    );
    commonContract(() => frontend.baseUrl);

    it('forwards the seeded users', async () => {
      expect(await (await fetch(`${frontend.baseUrl}/api/users`)).json()).toEqual(seeded);
    });
  });

  it('logs the original start-up line of the frontend and its own line for the backend', () => {
    const message = (lines: string[], start: string): string | undefined =>
      lines.map((l) => (JSON.parse(l) as { msg: string }).msg).find((m) => m.startsWith(start));
    expect(message(frontend.lines, 'Frontend')).toBe(`Frontend service running on port ${frontend.port}`);
    expect(message(backend.lines, 'Backend')).toBe(`Backend service running on port ${backend.port}`);
  });
});

describe('variant C when the backend process stops and comes back', () => {
  it('the frontend answers 500 while the backend is down and forwards again once it is back', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-c-'));
    let backend = await startService('backend', { DATA_DIR: dataDir });
    const frontend = await startService('frontend', { BACKEND_URL: backend.baseUrl });
    try {
      expect((await fetch(`${frontend.baseUrl}/api/users`)).status).toBe(200);
      expect(await backend.stop()).toBe(0);
      const down = await fetch(`${frontend.baseUrl}/api/users`);
      expect(down.status).toBe(500);
      expect(await down.json()).toEqual({ error: 'Failed to fetch users' });
      // Same port again: the frontend is configured with it.
      backend = await startService('backend', { DATA_DIR: dataDir, PORT: String(backend.port) });
      const up = await fetch(`${frontend.baseUrl}/api/users`);
      expect(up.status).toBe(200);
      expect(await up.json()).toEqual([]);
    } finally {
      await frontend.stop();
      await backend.stop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

/** More than the 16 MiB (about 150,000 users) the frontend once buffered at most: 21 MB of JSON. */
const MANY = 200_000;

/** The process's peak resident memory (VmHWM), in MB. */
const peakRssMb = (pid: number): number => Number(/VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))![1]) / 1024;

const strictlyIncreasing = (ids: number[]): boolean => ids.every((id, i) => i === 0 || id > ids[i - 1]!);

interface Database {
  name: string;
  /** A fresh database holding `count` users, and the environment that points the backend at it. */
  withUsers: (count: number) => Promise<NodeJS.ProcessEnv>;
}

const sqlite: Database = {
  name: 'SQLite',
  withUsers: async (count) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'svc-c-size-'));
    dataDirs.push(dataDir);
    await addUsersToSqlite(dataDir, count);
    return { DATA_DIR: dataDir };
  },
};
const databases: Database[] = [
  sqlite,
  ...(postgres === undefined
    ? []
    : [
        {
          name: 'PostgreSQL',
          withUsers: async (count: number) => {
            const url = await postgres.createDatabase();
            await addUsersToPostgres(url, count);
            return { DATABASE_URL: url };
          },
        },
      ]),
];

describe.each(databases)('variant C at real size, the backend on $name', ({ withUsers }) => {
  let backend: ServiceProcess;
  let frontend: ServiceProcess;
  beforeAll(async () => {
    backend = await startService('backend', await withUsers(MANY));
    frontend = await startService('frontend', { BACKEND_URL: backend.baseUrl });
  }, 60_000);
  afterAll(async () => {
    await frontend?.stop();
    await backend?.stop();
  });

  it(`lists ${MANY} users through the frontend: one valid JSON array, ids strictly increasing, the backend's bytes`, async () => {
    const res = await fetch(`${frontend.baseUrl}/api/users`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const text = await res.text();
    const users = JSON.parse(text) as ListedUser[];
    expect(users).toHaveLength(MANY);
    expect(users[0]).toMatchObject({ id: 1, name: 'User 1', email: 'user1@example.com' });
    expect(strictlyIncreasing(users.map((user) => user.id))).toBe(true);
    expect(text).toBe(await (await fetch(`${backend.baseUrl}/api/users`)).text());
    console.log(
      `${MANY} users through the frontend: ${(text.length / 1e6).toFixed(0)} MB; frontend peak RSS ${peakRssMb(frontend.pid).toFixed(0)} MB`,
    );
  }, 60_000);

  it('walks every page through the frontend by its Link headers, to the end', async () => {
    const ids: number[] = [];
    let pages = 0;
    for (let path: string | undefined = '/api/users?limit=1000'; path !== undefined; pages += 1) {
      const res = await fetch(`${frontend.baseUrl}${path}`);
      expect(res.status).toBe(200);
      ids.push(...((await res.json()) as ListedUser[]).map((user) => user.id));
      path = nextLink(res);
      if (path !== undefined) expect(path).toBe(`/api/users?limit=1000&after=${ids.at(-1)}`);
    }
    expect(pages).toBe(MANY / 1000);
    expect(ids).toHaveLength(MANY);
    expect(strictlyIncreasing(ids)).toBe(true);
  }, 60_000);
});

describe('variant C at real size: a million users through the frontend in flat memory', () => {
  const MILLION = 1_000_000;
  let backend: ServiceProcess;
  let frontend: ServiceProcess;
  beforeAll(async () => {
    backend = await startService('backend', await sqlite.withUsers(MILLION));
    // A 64 MB heap (the frontend needs about 18 MB): a million users' 108 MB of JSON could not be held.
    // The young generation pinned small too: V8 sizes it by its own heuristics and may grow it by tens of
    // MB when the process is short of CPU (seen in full runs: +24 MB, against +7 to +11 MB alone), which
    // says nothing of what the frontend holds; with it pinned, growth is what the service keeps.
    frontend = await startService('frontend', {
      BACKEND_URL: backend.baseUrl,
      NODE_OPTIONS: '--max-old-space-size=64 --max-semi-space-size=2',
    });
  }, 120_000);
  afterAll(async () => {
    await frontend?.stop();
    await backend?.stop();
  });

  it('streams them all, a complete array, and the frontend peak memory does not grow with the list', async () => {
    // A first, shorter list (21 MB) grows the heap to its working size (new space, compiled code).
    expect(await countListedUsers(`${frontend.baseUrl}/api/users?after=${MILLION - MANY}`)).toMatchObject({ users: MANY, complete: true });
    const before = peakRssMb(frontend.pid);
    const listed = await countListedUsers(`${frontend.baseUrl}/api/users`);
    expect(listed).toMatchObject({ status: 200, users: MILLION, complete: true });
    expect(listed.headers['transfer-encoding']).toBe('chunked');
    const growth = peakRssMb(frontend.pid) - before;
    console.log(
      `${MILLION} users: ${(listed.bytes / 1e6).toFixed(0)} MB through the frontend; its peak RSS ${before.toFixed(0)} MB, then +${growth.toFixed(0)} MB`,
    );
    // Five times the list's length, a fifth of its size at most: what it holds does not scale with the list.
    expect(growth).toBeLessThan(listed.bytes / 1e6 / 5);
  }, 120_000);
});
