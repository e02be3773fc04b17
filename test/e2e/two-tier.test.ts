import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore, type User } from '@svc/users';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendContract } from '@svc/testing/contract/backend';
import { commonContract } from '@svc/testing/contract/common';
import { frontendContract } from '@svc/testing/contract/frontend';
import { startService, type ServiceProcess } from '@svc/testing/service-process';

describe('variant C as real processes: backend on SQLite, frontend pointed at it', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-c-'));
  const seeded: User[] = [];
  let backend: ServiceProcess;
  let frontend: ServiceProcess;

  beforeAll(async () => {
    // The backend has no create operation: users are written beside it, as another service would.
    const store = createSqliteStore(dataDir);
    seeded.push(await store.create({ name: 'John Doe', email: 'john@example.com' }));
    seeded.push(await store.create({ name: 'Jane Smith', email: 'jane@example.com' }));
    await store.close();
    backend = await startService('backend', { DATA_DIR: dataDir, FLASK_ENV: 'production' });
    frontend = await startService('frontend', { BACKEND_URL: backend.baseUrl });
  });
  afterAll(async () => {
    await frontend.stop();
    await backend.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  describe('backend', () => {
    backendContract(() => backend.baseUrl, { users: seeded });
    commonContract(() => backend.baseUrl);
  });

  describe('frontend', () => {
    frontendContract(
      () => frontend.baseUrl,
      () => backend.baseUrl,
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
