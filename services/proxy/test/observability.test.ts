import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoUpstream, type EchoedRequest, type EchoUpstream } from '@sample-services/testing/echo-upstream';
import { freePort } from '@sample-services/testing/free-port';
import { parsePrometheusText, sampleValue } from '@sample-services/testing/prometheus-text';
import type { App } from '@sample-services/kit/server';
import { createProxyApp } from '../src/app.js';

describe('the proxy: request ids and its own metrics', () => {
  let upstream: EchoUpstream;
  let app: App;
  let baseUrl: string;
  let metricsUrl: string;
  beforeAll(async () => {
    upstream = await startEchoUpstream();
    const metricsPort = await freePort();
    app = createProxyApp({
      logger: false,
      upstream: new URL(upstream.url),
      maxConnections: 64,
      upstreamTimeoutMs: 2_000,
      metrics: { port: metricsPort, host: '127.0.0.1' },
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
    metricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });

  const scrape = async (): Promise<ReturnType<typeof parsePrometheusText>> => {
    const res = await fetch(metricsUrl);
    expect(res.status).toBe(200);
    return parsePrometheusText(await res.text());
  };

  it("passes a client's well-formed X-Request-Id to the upstream and back", async () => {
    const res = await fetch(`${baseUrl}/api/users`, { headers: { 'x-request-id': 'client-1' } });
    expect(res.headers.get('x-request-id')).toBe('client-1');
    expect(((await res.json()) as EchoedRequest).headers['x-request-id']).toBe('client-1');
  });

  it('replaces a malformed one, and sends the upstream the id it returns', async () => {
    const res = await fetch(`${baseUrl}/api/users`, { headers: { 'x-request-id': 'two words' } });
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(((await res.json()) as EchoedRequest).headers['x-request-id']).toBe(id);
  });

  it('forwards /metrics to the upstream and serves its own on METRICS_PORT', async () => {
    const forwarded = await fetch(`${baseUrl}/metrics`);
    expect(((await forwarded.json()) as EchoedRequest).url).toBe('/metrics');
    const families = await scrape();
    expect(sampleValue(families, 'http_requests_total', { method: 'GET', route: '/*', status_code: '200' })).toBeGreaterThanOrEqual(3);
  });

  it('counts upstream errors by kind: a 5xx answer and a reset', async () => {
    const before = await scrape();
    const value = (families: typeof before, kind: string): number => sampleValue(families, 'upstream_errors_total', { kind }) ?? Number.NaN;
    expect((await fetch(`${baseUrl}/x?status=503`)).status).toBe(503);
    expect((await fetch(`${baseUrl}/x?reset`, { method: 'POST', body: '{}' })).status).toBe(502);
    const after = await scrape();
    expect(value(after, 'bad_status')).toBe(value(before, 'bad_status') + 1);
    expect(value(after, 'reset')).toBe(value(before, 'reset') + 1);
  });
});
