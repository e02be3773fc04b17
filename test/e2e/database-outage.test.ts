import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, describe, expect, it } from 'vitest';
import { startSilentServer, usePostgres } from '@sample-services/testing/postgres';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

const unavailable = { error: 'Database unavailable; try again later' };

async function health(baseUrl: string): Promise<{ body: unknown; ms: number }> {
  const started = Date.now();
  const res = await fetch(`${baseUrl}/health`);
  expect(res.status).toBe(200);
  return { body: await res.json(), ms: Date.now() - started };
}

async function post(baseUrl: string, email: string): Promise<Response> {
  return fetch(`${baseUrl}/api/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'N', email }),
  });
}

async function waitConnected(service: ServiceProcess, label: string): Promise<void> {
  for (let i = 0; i < 100; i++) {
    const { body } = await health(`${service.baseUrl}`);
    if ((body as { database: string }).database === 'connected') return;
    await sleep(100);
  }
  throw new Error(`${label} did not reconnect within 10 s`);
}

describe('variant B when its database hangs', () => {
  it('starts anyway, answers /health within 2 s as disconnected, data routes 503, and SIGTERM lets a request finish', async () => {
    const silent = await startSilentServer();
    const service = await startService('database', { DATABASE_URL: silent.url });
    try {
      expect(service.lines.some((l) => l.includes('not reachable yet'))).toBe(true);
      const { body, ms } = await health(service.baseUrl);
      expect(body).toEqual({ status: 'healthy', database: 'disconnected' });
      expect(ms).toBeLessThan(2_000); // the spec's bound; the probe gives up at 1 s
      const list = await fetch(`${service.baseUrl}/api/users`);
      expect(list.status).toBe(503);
      expect(list.headers.get('retry-after')).toBe('1');
      expect(await list.json()).toEqual(unavailable);

      // A request in flight when SIGTERM arrives still gets its answer, then the process exits 0.
      const inFlight = post(service.baseUrl, 'late@example.com');
      await sleep(300);
      const exited = service.stop('SIGTERM');
      const res = await inFlight;
      expect(res.status).toBe(503);
      expect(await res.json()).toEqual(unavailable);
      expect(await exited).toBe(0);
    } finally {
      await service.stop();
      await silent.close();
    }
  }, 45_000); // waits out the 3 s connection timeout three times
});

const postgres = await usePostgres(true);

describe.skipIf(postgres === undefined)('variant B and the backend of C when PostgreSQL stops and comes back', () => {
  afterAll(() => postgres?.destroy());

  it('B stays up, reports disconnected, answers 503, and recovers by itself', async () => {
    const service = await startService('database', { DATABASE_URL: await postgres!.createDatabase() });
    try {
      expect((await post(service.baseUrl, 'before@example.com')).status).toBe(201);
      await postgres!.stop();

      const { body, ms } = await health(service.baseUrl);
      expect(body).toEqual({ status: 'healthy', database: 'disconnected' });
      expect(ms).toBeLessThan(2_000);
      const list = await fetch(`${service.baseUrl}/api/users`);
      expect(list.status).toBe(503);
      expect(await list.json()).toEqual(unavailable);
      const create = await post(service.baseUrl, 'during@example.com');
      expect(create.status).toBe(503);
      expect(await create.json()).toEqual(unavailable);

      await postgres!.start();
      await waitConnected(service, 'B');
      expect((await post(service.baseUrl, 'after@example.com')).status).toBe(201);
      const users = (await (await fetch(`${service.baseUrl}/api/users`)).json()) as { email: string }[];
      expect(users.map((u) => u.email)).toEqual(['before@example.com', 'after@example.com']);
    } finally {
      await postgres!.start().catch(() => undefined); // already running unless an assertion failed early
      expect(await service.stop()).toBe(0);
    }
  }, 45_000);

  it('the backend of C does the same for its list', async () => {
    const service = await startService('backend', { DATABASE_URL: await postgres!.createDatabase() });
    try {
      await postgres!.stop();
      const { body, ms } = await health(service.baseUrl);
      expect(body).toEqual({ status: 'healthy', service: 'backend', database: 'disconnected' });
      expect(ms).toBeLessThan(2_000);
      const list = await fetch(`${service.baseUrl}/api/users`);
      expect(list.status).toBe(503);
      expect(await list.json()).toEqual(unavailable);
      await postgres!.start();
      await waitConnected(service, 'the backend');
      expect(await (await fetch(`${service.baseUrl}/api/users`)).json()).toEqual([]);
    } finally {
      await postgres!.start().catch(() => undefined);
      expect(await service.stop()).toBe(0);
    }
  }, 45_000);
});
