import { get } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openApiContract } from '@sample-services/testing/contract/openapi-document';
import { proxyContract } from '@sample-services/testing/contract/proxy';
import { downloadBody, startEchoUpstream, type EchoedRequest, type EchoUpstream } from '@sample-services/testing/echo-upstream';
import { createProxyApp } from '../src/app.js';

describe('createProxyApp in front of the echo upstream', () => {
  let upstream: EchoUpstream;
  let app: FastifyInstance;
  let baseUrl: string;
  beforeAll(async () => {
    upstream = await startEchoUpstream();
    app = createProxyApp({ logger: false, upstream: new URL(upstream.url), maxConnections: 64, upstreamTimeoutMs: 2_000 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  proxyContract({ baseUrl: () => baseUrl, upstream: () => upstream });

  it('answers methods beyond the usual ones too, and adds no 404 of its own', async () => {
    // A Content-Type and no body: nothing to wait for (kit's fast path 6).
    const res = await fetch(`${baseUrl}/health`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as EchoedRequest).method).toBe('DELETE');
    const report = await app.inject({ method: 'PROPFIND', url: '/dav' });
    expect(report.statusCode).toBe(200);
    expect(report.json<EchoedRequest>().method).toBe('PROPFIND');
  });

  // nginx 1.22 cuts the connection here instead (it passes no 1xx on): the TypeScript proxy does better.
  it('drops an informational 103 Early Hints and passes the final answer', async () => {
    const res = await fetch(`${baseUrl}/hints?early`);
    expect(res.status).toBe(200);
    expect(((await res.json()) as EchoedRequest).url).toBe('/hints?early');
  });

  it.each(['chunked', 'sized'])('relays a large %s response intact to a client that stops reading for a while', async (framing) => {
    const size = 8 * 1024 * 1024;
    const body = await new Promise<Buffer>((resolve, reject) => {
      get(`${baseUrl}/big?download=${size}&${framing}`, (res) => {
        const chunks: Buffer[] = [];
        res.once('data', () => {
          // Stop reading, so the proxy must hold the upstream back until we resume.
          res.pause();
          setTimeout(() => res.resume(), 200);
        });
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve(Buffer.concat(chunks)));
        res.on('error', reject);
      }).on('error', reject);
    });
    expect(body.equals(downloadBody(size))).toBe(true);
  });

  it('passes a body of any content type on unparsed', async () => {
    const res = await app.inject({ method: 'POST', url: '/x', headers: { 'content-type': 'text/plain' }, payload: 'not json {' });
    expect(res.statusCode).toBe(200);
    expect(res.json<EchoedRequest>().bodyLength).toBe(10);
  });

  it('ends the upstream request when the client gives up waiting', async () => {
    const arrived = upstream.nextHanging();
    const client = new AbortController();
    const pending = fetch(`${baseUrl}/slow?hang`, { signal: client.signal }).catch(() => 'aborted');
    await arrived;
    const abandoned = upstream.abandoned;
    client.abort();
    expect(await pending).toBe('aborted');
    await expect.poll(() => upstream.abandoned, { timeout: 5_000 }).toBe(abandoned + 1);
    upstream.releaseHanging();
  });

  it('forwards the same way with request logging on (Fastify writes a line per request), errors included', async () => {
    const logger = pino({ level: 'debug' }, { write: () => undefined });
    const own = createProxyApp({ logger, upstream: new URL(upstream.url), maxConnections: 4, upstreamTimeoutMs: 2_000 });
    await own.listen({ port: 0, host: '127.0.0.1' });
    const ownUrl = `http://127.0.0.1:${(own.server.address() as AddressInfo).port}`;
    try {
      const res = await fetch(`${ownUrl}/a?b`, { method: 'PROPFIND', headers: { 'x-request-id': 'debug-1' } });
      expect([res.status, res.headers.get('x-request-id'), ((await res.json()) as EchoedRequest).url]).toEqual([200, 'debug-1', '/a?b']);
      const typed = await fetch(`${ownUrl}/t`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
      expect([typed.status, ((await typed.json()) as EchoedRequest).bodyLength]).toEqual([200, 0]);
      const refused = await fetch(`${ownUrl}/%zz`);
      expect([refused.status, await refused.json()]).toEqual([400, { error: "'/%zz' is not a valid url component" }]);
      const reset = await fetch(`${ownUrl}/x?reset`);
      expect([reset.status, await reset.json()]).toEqual([502, { error: 'Bad gateway: upstream unavailable' }]);
    } finally {
      await own.close();
    }
  });

  it('closes the pool on close, letting the request in flight finish', async () => {
    const own = createProxyApp({ logger: false, upstream: new URL(upstream.url), maxConnections: 4, upstreamTimeoutMs: 5_000 });
    await own.listen({ port: 0, host: '127.0.0.1' });
    const arrived = upstream.nextHanging();
    const pending = fetch(`http://127.0.0.1:${(own.server.address() as AddressInfo).port}/slow?hang`);
    await arrived;
    const closed = own.close();
    upstream.releaseHanging();
    expect((await pending).status).toBe(200);
    await closed;
  });
});

// Port 9 (discard): the document is built without forwarding anything.
openApiContract('proxy', () =>
  createProxyApp({ logger: false, upstream: new URL('http://127.0.0.1:9'), maxConnections: 8, upstreamTimeoutMs: 1_000 }),
);
