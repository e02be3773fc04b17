import type { AddressInfo } from 'node:net';
import type { App } from '@svc/kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoUpstream, type EchoUpstream } from '@svc/testing/echo-upstream';
import { createProxyApp } from '../src/app.js';

// Every forwarded request goes through Fastify's routing, so a hook a copier adds (auth, a rate
// limit) holds for requests over a socket exactly as for app.inject()'s.
describe('an onRequest hook added to the proxy app', () => {
  let upstream: EchoUpstream;
  let app: App;
  let baseUrl: string;
  beforeAll(async () => {
    upstream = await startEchoUpstream();
    app = createProxyApp({ logger: false, upstream: new URL(upstream.url), maxConnections: 8, upstreamTimeoutMs: 2_000 });
    app.addHook('onRequest', async (request, reply) => {
      if (request.headers.authorization !== 'Bearer x') return reply.code(401).send({ error: 'Unauthorized' });
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  it.each([
    ['without a token', {}, 401],
    ['with the wrong token', { authorization: 'Bearer y' }, 401],
    ['with the token', { authorization: 'Bearer x' }, 200],
  ])('answers a request %s over a socket as through inject()', async (_case, headers: Record<string, string>, status) => {
    const before = upstream.requests;
    const overSocket = await fetch(`${baseUrl}/api/users?q=1`, { method: 'POST', headers, body: '{}' });
    const injected = await app.inject({ method: 'POST', url: '/api/users?q=1', headers, payload: '{}' });
    expect([overSocket.status, injected.statusCode]).toEqual([status, status]);
    const socketBody = (await overSocket.json()) as Record<string, unknown>;
    const injectedBody = injected.json<Record<string, unknown>>();
    if (status === 401) expect([socketBody, injectedBody]).toEqual([{ error: 'Unauthorized' }, { error: 'Unauthorized' }]);
    else expect([socketBody.url, injectedBody.url]).toEqual(['/api/users?q=1', '/api/users?q=1']);
    expect(upstream.requests - before).toBe(status === 401 ? 0 : 2);
  });
});
