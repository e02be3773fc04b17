import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '@sample-services/testing/prometheus-text';
import { BACKEND_ATTEMPTS } from '../src/backend-client.js';
import {
  fetchFailedLine as fetchFailed,
  getRaw,
  jsonHeaders as json,
  startFrontend,
  useFrontendOnFakeBackend,
  type Answer,
  type Frontend,
} from './support.js';

const list = '[{"id":1,"name":"A","email":"a@b.c","created_at":"2026-11-22T10:15:30.123Z"}]';

/**
 * A backend replica that stops, or is gone, leaves the frontend's kept-alive connections to it
 * closing or reset, and its address refusing: a GET that failed so before any answer is sent
 * again (the proxy's rule for idempotent requests), and only then.
 */
describe('the frontend sends a users request again when its connection failed before any answer', () => {
  const under = useFrontendOnFakeBackend();
  const { start } = under;
  const resets = async (): Promise<number> =>
    sampleValue(parsePrometheusText(await (await fetch(`${under.frontend.url}/metrics`)).text()), 'upstream_errors_total', {
      kind: 'reset',
    }) ?? Number.NaN;

  it('a kept-alive connection the backend drops as the request arrives: sent again on a new connection, 200', async () => {
    const sockets: number[] = [];
    let served = 0;
    await start((req, res) => {
      sockets.push(req.socket.remotePort ?? 0);
      served += 1;
      // The second request comes on the connection kept from the first: dropped unanswered, as a
      // replica that is stopping closes it.
      if (served === 2) req.socket.destroy();
      else res.writeHead(200, json).end(list);
    });
    const before = await resets();
    expect((await getRaw(`${under.frontend.url}/api/users`)).status).toBe(200);
    const answer = await getRaw(`${under.frontend.url}/api/users`);
    expect(answer.status).toBe(200);
    expect(answer.body.toString()).toBe(list);
    expect(under.backend.requests).toEqual(['GET /api/users', 'GET /api/users', 'GET /api/users']);
    expect(sockets[1]).toBe(sockets[0]);
    expect(sockets[2]).not.toBe(sockets[1]);
    // The failed attempt is counted, though the client never saw it; nothing is logged as failed.
    expect(await resets()).toBe(before + 1);
    expect(under.frontend.logged().map((line) => line.msg)).not.toContain(fetchFailed);
  });

  it('HEAD too', async () => {
    let served = 0;
    await start((req, res) => {
      served += 1;
      if (served === 1) req.socket.destroy();
      else res.writeHead(200, json).end();
    });
    const answer = await fetch(`${under.frontend.url}/api/users`, { method: 'HEAD' });
    expect(answer.status).toBe(200);
    expect(under.backend.requests).toEqual(['HEAD /api/users', 'HEAD /api/users']);
  });

  it(`at most ${BACKEND_ATTEMPTS} attempts: a backend that resets every connection gets its client the 500 at once`, async () => {
    await start((req) => req.socket.destroy());
    const started = Date.now();
    const answer = await getRaw(`${under.frontend.url}/api/users`);
    expect(answer.status).toBe(500);
    expect(answer.body.toString()).toBe('{"error":"Failed to fetch users"}');
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(under.backend.requests).toHaveLength(BACKEND_ATTEMPTS);
    expect(under.frontend.logged().filter((line) => line.msg === fetchFailed)).toHaveLength(1);
  });

  it.each<[string, Answer, number?]>([
    ['a non-2xx answer', (_req, res) => res.writeHead(503, json).end('{"error":"Database unavailable"}')],
    [
      'headers, then a cut before the first body byte',
      (_req, res) => void (res.writeHead(200, json).flushHeaders(), setTimeout(() => res.destroy(), 50)),
    ],
    ['no headers within BACKEND_TIMEOUT_MS (a slow backend is not given twice the work)', () => undefined, 300],
  ])('not sent again after %s: one request, the 500', async (_case, answer, timeoutMs) => {
    await start(answer, timeoutMs);
    // The 500 comes once the last attempt is over: no request of this call can follow it.
    expect((await getRaw(`${under.frontend.url}/api/users`)).status).toBe(500);
    expect(under.backend.requests).toHaveLength(1);
  });

  it('not sent again once its client went away', async () => {
    let dropped = false;
    // The client goes away once the backend holds its request (not after a fixed 50 ms, which a busy
    // machine spent before the request reached the backend), then the backend drops the connection.
    const client = new AbortController();
    await start(
      (req) => {
        client.abort();
        setTimeout(() => {
          req.socket.destroy();
          dropped = true;
        }, 100);
      },
      5_000,
      'debug',
    );
    await fetch(`${under.frontend.url}/api/users`, { signal: client.signal }).catch(() => undefined);
    // Logged once the backend call is over, every attempt of it; and the backend dropped its connection by then.
    const gone = 'the client went away before the backend answered';
    await expect.poll(() => dropped && under.frontend.logged().some((line) => line.msg === gone), { timeout: 5_000 }).toBe(true);
    expect(under.backend.requests).toHaveLength(1);
  });
});

/**
 * End to end, under load: a backend whose replicas stop one after another (a rolling update, a
 * scale-down) drops kept-alive connections as requests arrive on them. This one drops every fifth
 * request that comes on a connection it already answered on, while four clients keep asking the
 * frontend for the users: each such request is sent again on another connection, and no client
 * sees a failure (without the retry, about a fifth of them would get the 500).
 */
describe('the frontend under load while the backend drops kept-alive connections', () => {
  let server: Server | undefined;
  let frontend: Frontend | undefined;
  afterEach(async () => {
    await frontend?.app.close();
    server?.closeAllConnections();
    server?.close();
  });

  it('no failed request', async () => {
    const answered = new WeakSet<object>();
    let received = 0;
    let dropped = 0;
    server = createServer((req, res) => {
      received += 1;
      if (received % 5 === 0 && answered.has(req.socket)) {
        dropped += 1;
        req.socket.destroy();
        return;
      }
      answered.add(req.socket);
      res.writeHead(200, json).end(list);
    });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    frontend = await startFrontend(`http://127.0.0.1:${(server.address() as AddressInfo).port}`);
    const url = `${frontend.url}/api/users`;
    const statuses = new Map<number, number>();
    // A number of requests, not a time: as many are dropped on a slow machine as on a fast one.
    let asked = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (asked < 240) {
          asked += 1;
          const { status } = await getRaw(url);
          statuses.set(status, (statuses.get(status) ?? 0) + 1);
        }
      }),
    );
    console.log(`backend dropping kept-alive connections: ${[...statuses].map(([s, n]) => `${n} x ${s}`).join(', ')}; ${dropped} dropped`);
    expect([...statuses.keys()]).toEqual([200]);
    expect(statuses.get(200)).toBeGreaterThan(50);
    expect(dropped).toBeGreaterThan(10);
    expect(frontend.logged().map((line) => line.msg)).not.toContain(fetchFailed);
  });
});
