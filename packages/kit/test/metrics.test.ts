import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { connect } from 'node:net';
import { parsePrometheusText, sampleValue, type MetricFamily } from '@sample-services/testing/prometheus-text';
import { Counter } from 'prom-client';
import { countRequests, metricsRoute, processRegistry } from '../src/metrics.js';
import { createServer, type App } from '../src/server.js';

const api = { title: 'test', description: 'metrics' };
let app: App;
let release: () => void = () => undefined;
let held = Promise.resolve();

afterEach(async () => {
  release();
  await app.close();
});

/** An app with a few routes and the metrics plugins, listening. */
async function build(): Promise<string> {
  app = createServer({ logger: false, api });
  void app.register(countRequests).register(metricsRoute);
  app.get('/items/:id', (_request, reply) => {
    void reply.send({ ok: true });
  });
  app.post('/items', (request, reply) => {
    void reply.send({ received: request.body });
  });
  app.get('/held', async () => {
    await held;
    return { ok: true };
  });
  // The metrics are counted where the response head is written, which inject() bypasses: a real socket.
  return app.listen({ port: 0, host: '127.0.0.1' });
}

async function scrape(url: string): Promise<Map<string, MetricFamily>> {
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
  return parsePrometheusText(await res.text());
}

/** Waits for the condition, checking every 20 ms, for at most 5 s. */
async function until(condition: () => Promise<boolean>): Promise<void> {
  for (const deadline = Date.now() + 5000; !(await condition());) {
    if (Date.now() > deadline) throw new Error('the condition did not hold within 5 s');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

const count = (families: Map<string, MetricFamily>, labels: Record<string, string>): number =>
  sampleValue(families, 'http_requests_total', labels) ?? 0;

describe('GET /metrics', () => {
  it('counts requests by method, route template and status, in a histogram too, and not itself', async () => {
    const baseUrl = await build();
    const before = await scrape(`${baseUrl}/metrics`);
    expect(count(before, { route: '/items/:id' })).toBe(0);
    await fetch(`${baseUrl}/items/1`);
    await fetch(`${baseUrl}/items/2`);
    await fetch(`${baseUrl}/no/such/path/123`);
    const after = await scrape(`${baseUrl}/metrics`);
    const labels = { method: 'GET', route: '/items/:id', status_code: '200' };
    expect(count(after, labels)).toBe(2);
    expect(sampleValue(after, 'http_request_duration_seconds_count', labels)).toBe(2);
    expect(sampleValue(after, 'http_request_duration_seconds_bucket', { ...labels, le: '+Inf' })).toBe(2);
    expect(sampleValue(after, 'http_request_duration_seconds_sum', labels)).toBeGreaterThan(0);
    // Never the raw URL: an unknown path is one series whatever the path.
    expect(count(after, { method: 'GET', route: 'unmatched', status_code: '404' })).toBe(1);
    expect([...(after.get('http_requests_total')?.samples ?? [])].map((s) => s.labels.route)).not.toContain('/items/1');
    // Two scrapes, neither counted, neither in flight while it is written.
    expect(count(after, { route: '/metrics' })).toBe(0);
    expect(sampleValue(after, 'http_requests_in_flight')).toBe(0);
    expect(after.get('http_request_duration_seconds')?.type).toBe('histogram');
  });

  it('counts HEAD, which Fastify answers from the GET route, under that route', async () => {
    const baseUrl = await build();
    expect((await fetch(`${baseUrl}/items/9`, { method: 'HEAD' })).status).toBe(200);
    expect(count(await scrape(`${baseUrl}/metrics`), { method: 'HEAD', route: '/items/:id', status_code: '200' })).toBe(1);
  });

  it('counts a request that failed before its handler under its route', async () => {
    const baseUrl = await build();
    const bad = await fetch(`${baseUrl}/items`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":' });
    expect(bad.status).toBe(400);
    expect(count(await scrape(`${baseUrl}/metrics`), { method: 'POST', route: '/items', status_code: '400' })).toBe(1);
  });

  it('shows a request in flight, and one the client abandons as aborted once it closes', async () => {
    held = new Promise((resolve) => (release = resolve));
    const baseUrl = await build();
    const socket = connect(Number(new URL(baseUrl).port), '127.0.0.1');
    await once(socket, 'connect');
    socket.write('GET /held HTTP/1.1\r\nHost: x\r\n\r\n');
    const inFlight = async (): Promise<number | undefined> => sampleValue(await scrape(`${baseUrl}/metrics`), 'http_requests_in_flight');
    await until(async () => (await inFlight()) === 1);
    socket.destroy();
    await until(async () => (await inFlight()) === 0);
    release(); // the handler ends after its client went away
    expect(count(await scrape(`${baseUrl}/metrics`), { method: 'GET', route: '/held', status_code: 'aborted' })).toBe(1);
  });

  it('has the process and event-loop metrics', async () => {
    const families = await scrape(`${await build()}/metrics`);
    for (const name of [
      'process_cpu_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_p99_seconds',
      'nodejs_heap_size_used_bytes',
    ]) {
      expect(families.has(name), name).toBe(true);
    }
  });

  it("shows what a service counts for its process, e.g. its upstream's errors, in the app's /metrics", async () => {
    const baseUrl = await build();
    const name = 'kit_test_process_events_total';
    const counter =
      (processRegistry.getSingleMetric(name) as Counter | undefined) ?? new Counter({ name, help: 'test', registers: [processRegistry] });
    const before = sampleValue(await scrape(`${baseUrl}/metrics`), name) ?? Number.NaN;
    counter.inc();
    expect(sampleValue(await scrape(`${baseUrl}/metrics`), name)).toBe(before + 1);
  });
});
