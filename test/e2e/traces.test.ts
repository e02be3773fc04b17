import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEchoUpstream, type EchoedRequest } from '@sample-services/testing/echo-upstream';
import { freePort } from '@sample-services/testing/free-port';
import { addUsersToPostgres } from '@sample-services/testing/many-users';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '@sample-services/testing/otlp-receiver';
import { startSilentServer, usePostgres } from '@sample-services/testing/postgres';
import { repoRoot } from '@sample-services/testing/repo-root';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

const postgres = await usePostgres();
afterAll(() => postgres?.destroy());

let receiver: OtlpReceiver;
const started: ServiceProcess[] = [];
beforeEach(async () => {
  receiver = await startOtlpReceiver();
});
afterEach(async () => {
  await Promise.all(started.splice(0).map((service) => service.stop()));
  await receiver.close();
});

/** The variables that turn tracing on toward the test's receiver, exporting every 100 ms. */
const tracedTo = (extra: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv => ({
  OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
  OTEL_BSP_SCHEDULE_DELAY: '100',
  ...extra,
});

async function start(...args: Parameters<typeof startService>): Promise<ServiceProcess> {
  const service = await startService(...args);
  started.push(service);
  return service;
}

/** Stops the services in order (SIGTERM: their buffered spans are exported first), each exiting 0. */
async function stopAll(...services: ServiceProcess[]): Promise<void> {
  for (const service of services) expect(await service.stop()).toBe(0);
}

/** A client's trace: a traceparent as a browser or a gateway would send it. */
function clientTrace(): { traceId: string; spanId: string; traceparent: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
}

function only(spans: ReceivedSpan[], what: string, match: (span: ReceivedSpan) => boolean): ReceivedSpan {
  const found = spans.filter(match);
  expect(found, what).toHaveLength(1);
  return found[0] as ReceivedSpan;
}

/** Every span's parent is exported too, but the client's span the trace began with. */
function expectEveryParentExported(spans: ReceivedSpan[], clientSpanId: string): void {
  const ids = new Set(spans.map((span) => span.spanId));
  for (const span of spans) if (span.parentSpanId !== clientSpanId) expect(ids, `parent of ${span.name}`).toContain(span.parentSpanId);
}

/** The span's parent, its parent's parent... as far as they were exported: the way up to the trace's root. */
function ancestorsOf(spans: ReceivedSpan[], span: ReceivedSpan): ReceivedSpan[] {
  const byId = new Map(spans.map((each) => [each.spanId, each]));
  const ancestors: ReceivedSpan[] = [];
  for (let parent = byId.get(span.parentSpanId); parent !== undefined; parent = byId.get(parent.parentSpanId)) ancestors.push(parent);
  return ancestors;
}

/**
 * A span made while a service handled a request has, between it and the request's server span,
 * @fastify/otel's span of the request (internal, named `request`, with the route): no other.
 */
function expectInRequest(spans: ReceivedSpan[], span: ReceivedSpan, server: ReceivedSpan): void {
  const [request, above] = ancestorsOf(spans, span);
  expect(request, `the request span above ${span.name}`).toMatchObject({
    name: 'request',
    kind: SPAN_KIND.internal,
    parentSpanId: server.spanId,
    attributes: { 'http.route': server.attributes['http.route'] },
  });
  expect(above).toBe(server);
}

const logLines = (service: ServiceProcess): Record<string, unknown>[] =>
  service.lines.filter((line) => line.startsWith('{')).map((line) => JSON.parse(line) as Record<string, unknown>);

/** OTLP's StatusCode ERROR. */
const SPAN_STATUS_ERROR = 2;

/** A SQLite statement's attributes (packages/telemetry): its summary, never its text or parameters. */
const sqliteAttributes = ['db.collection.name', 'db.operation.name', 'db.query.summary', 'db.system.name'];
/** A PostgreSQL query's (pg's instrumentation): its text, whose values are parameters ($1), never the values themselves. */
const postgresAttributes = ['db.namespace', 'db.postgresql.plan', 'db.query.text', 'db.system.name', 'server.address', 'server.port'];

describe.skipIf(postgres === undefined)('frontend -> backend -> PostgreSQL, traced (OTLP protobuf)', () => {
  it('is one trace: every parent exported, server, client and statement spans with their attributes, logs joined', async () => {
    const url = await postgres!.createDatabase();
    const database = new URL(url).pathname.slice(1);
    // 12,000 users: the first page, then COPY batches written while the response streams.
    await addUsersToPostgres(url, 12_000);
    const debug = { LOG_LEVEL: 'debug', LOG_FORMAT: 'json' };
    const backend = await start('backend', { DATABASE_URL: url, ...debug, ...tracedTo() });
    const frontend = await start('frontend', { BACKEND_URL: backend.baseUrl, ...debug, ...tracedTo() });
    const client = clientTrace();
    const response = await fetch(`${frontend.baseUrl}/api/users`, {
      headers: { traceparent: client.traceparent, 'x-request-id': 'traced-1' },
    });
    expect(response.status).toBe(200);
    expect(((await response.json()) as unknown[]).length).toBe(12_000);
    await stopAll(frontend, backend);

    expect(receiver.contentTypes.every((type) => type === 'application/x-protobuf')).toBe(true);
    const spans = receiver.spans.filter((span) => span.traceId === client.traceId);
    const frontendServer = only(spans, 'frontend server span', (s) => s.service === 'frontend' && s.kind === SPAN_KIND.server);
    expect(frontendServer).toMatchObject({ parentSpanId: client.spanId, name: 'GET /api/users' });
    expect(frontendServer.attributes).toMatchObject({
      'http.route': '/api/users',
      'http.request.method': 'GET',
      'http.response.status_code': 200,
    });
    const backendCall = only(spans, 'frontend client span', (s) => s.service === 'frontend' && s.kind === SPAN_KIND.client);
    expectInRequest(spans, backendCall, frontendServer);
    expect(backendCall.attributes).toMatchObject({
      'http.request.method': 'GET',
      'url.full': `${backend.baseUrl}/api/users`,
      'http.response.status_code': 200,
    });
    const backendServer = only(spans, 'backend server span', (s) => s.service === 'backend' && s.kind === SPAN_KIND.server);
    expect(backendServer).toMatchObject({ parentSpanId: backendCall.spanId, name: 'GET /api/users' });
    expect(backendServer.attributes).toMatchObject({ 'http.route': '/api/users', 'http.response.status_code': 200 });

    const statements = spans.filter((s) => s.service === 'backend' && s.kind === SPAN_KIND.client);
    // The first page's query, then COPY batches sized to the client's pace (list-stream.ts): how many depends on it.
    // A COPY stream has no span of its own (pg's instrumentation ends one through a query's callback or
    // promise, which a stream has not): its batches show as the pool's connection handed to each.
    const names = statements.map((s) => s.name).sort();
    expect(
      names.filter((name) => name !== 'pg-pool.connect'),
      `statements ${names.join(', ')}`,
    ).toEqual([`pg.query:users-page ${database}`]);
    expect(names.length, `statements ${names.join(', ')}`).toBeGreaterThanOrEqual(3);
    for (const statement of statements) {
      expectInRequest(spans, statement, backendServer);
      expect(statement.attributes).toMatchObject({ 'db.system.name': 'postgresql', 'db.namespace': database });
    }
    const page = only(statements, 'page query', (s) => s.name.startsWith('pg.query:'));
    expect(page.attributes['db.query.text']).toMatch(/^WITH page AS \(.* WHERE id > \$1 ORDER BY id LIMIT \$2\)/);
    expect(Object.keys(page.attributes).sort()).toEqual(postgresAttributes);
    expectEveryParentExported(spans, client.spanId);
    // The streamed list's span ends after its last batch was read, once the last byte is written.
    const lastStatementEnd = statements.reduce((end, s) => (s.endNanos > end ? s.endNanos : end), 0n);
    expect(backendServer.endNanos >= lastStatementEnd).toBe(true);

    // Lines written while serving carry the trace beside the request's id.
    for (const [service, server] of [
      [frontend, frontendServer],
      [backend, backendServer],
    ] as const) {
      const lines = logLines(service).filter((line) => line.reqId === 'traced-1');
      expect(lines.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
      // The HTTP server's span starts before Fastify sees the request: its first line is in the trace too.
      for (const line of lines) expect(line).toMatchObject({ trace_id: client.traceId, span_id: server.spanId });
    }
  });

  it("a create is a traced INSERT under its request, the user's values nowhere in the trace", async () => {
    const url = await postgres!.createDatabase();
    const database = await start('database', { DATABASE_URL: url, ...tracedTo() });
    const created = await fetch(`${database.baseUrl}/api/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Traced Person', email: 'traced.person@example.com' }),
    });
    expect(created.status).toBe(201);
    await stopAll(database);
    const server = only(receiver.spans, 'server span', (s) => s.kind === SPAN_KIND.server && s.name === 'POST /api/users');
    const spans = receiver.spans.filter((s) => s.traceId === server.traceId);
    const insert = only(spans, 'INSERT span', (s) => s.name.startsWith('pg.query:users-insert'));
    expectInRequest(spans, insert, server);
    expect(insert.attributes['db.query.text']).toMatch(
      /^INSERT INTO users \(name, email\)\nSELECT name, email FROM unnest\(\$1::text\[\], \$2::text\[\]\)/,
    );
    expect(Object.keys(insert.attributes).sort()).toEqual(postgresAttributes);
    expect(JSON.stringify(receiver.spans, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).not.toMatch(
      /traced\.person|Traced Person/,
    );
  });
});

describe('proxy -> A, traced (OTLP JSON)', () => {
  it('is one trace: the proxy continues the client, its relay span is the parent of A', async () => {
    const json = { OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json' };
    const simple = await start('simple', tracedTo(json));
    const proxy = await start('proxy', { UPSTREAM_URL: simple.baseUrl, METRICS_PORT: 'off', ...tracedTo(json) });
    const client = clientTrace();
    expect((await fetch(`${proxy.baseUrl}/api/users?x=1`, { headers: { traceparent: client.traceparent } })).status).toBe(200);
    await stopAll(proxy, simple);

    expect(receiver.contentTypes.length).toBeGreaterThan(0);
    expect(receiver.contentTypes.every((type) => type === 'application/json')).toBe(true);
    const spans = receiver.spans.filter((span) => span.traceId === client.traceId);
    // Each service's server span and @fastify/otel's request span under it, and the proxy's relay.
    expect(spans.map((s) => `${s.service} ${s.name}`).sort()).toEqual([
      'proxy GET',
      'proxy GET /*',
      'proxy request',
      'simple GET /api/users',
      'simple request',
    ]);
    const proxyServer = only(spans, 'proxy server span', (s) => s.service === 'proxy' && s.kind === SPAN_KIND.server);
    expect(proxyServer).toMatchObject({ parentSpanId: client.spanId, name: 'GET /*' });
    expect(proxyServer.attributes).toMatchObject({ 'http.route': '/*', 'url.path': '/api/users', 'http.response.status_code': 200 });
    const relay = only(spans, 'proxy relay span', (s) => s.service === 'proxy' && s.kind === SPAN_KIND.client);
    expectInRequest(spans, relay, proxyServer);
    expect(relay.attributes).toMatchObject({ 'url.full': `${simple.baseUrl}/api/users?x=1`, 'http.response.status_code': 200 });
    const upstream = only(spans, 'A server span', (s) => s.service === 'simple' && s.kind === SPAN_KIND.server);
    expect(upstream).toMatchObject({ parentSpanId: relay.spanId, name: 'GET /api/users', kind: SPAN_KIND.server });
    expectEveryParentExported(spans, client.spanId);
  });

  it("a trace the client sampled out (flag 00) is exported by no one, and the proxy passes the decision on in the trace's id", async () => {
    const upstream = await startEchoUpstream();
    try {
      const proxy = await start('proxy', { UPSTREAM_URL: upstream.url, METRICS_PORT: 'off', ...tracedTo() });
      const client = clientTrace();
      const sampledOut = client.traceparent.replace(/-01$/, '-00');
      const echoed = (await (await fetch(`${proxy.baseUrl}/`, { headers: { traceparent: sampledOut } })).json()) as EchoedRequest;
      await stopAll(proxy);
      expect(echoed.headers.traceparent).toMatch(new RegExp(`^00-${client.traceId}-[0-9a-f]{16}-00$`));
      expect(echoed.headers.traceparent).not.toBe(sampledOut);
      expect(receiver.spans).toEqual([]);
    } finally {
      await upstream.close();
    }
  });

  it('with tracing off in the proxy, the client traceparent reaches A unchanged', async () => {
    const simple = await start('simple', tracedTo());
    const proxy = await start('proxy', { UPSTREAM_URL: simple.baseUrl, METRICS_PORT: 'off' });
    const client = clientTrace();
    expect((await fetch(`${proxy.baseUrl}/`, { headers: { traceparent: client.traceparent } })).status).toBe(200);
    await stopAll(proxy, simple);
    const spans = receiver.spans.filter((span) => span.traceId === client.traceId);
    const server = only(spans, 'A server span', (s) => s.kind === SPAN_KIND.server);
    expect(server).toMatchObject({ service: 'simple', parentSpanId: client.spanId });
    expect(spans.map((s) => s.service)).toEqual(['simple', 'simple']);
  });
});

describe('failures in a trace', () => {
  it("the frontend's 500 with its backend down: server and client spans with error status, the client's with error.type", async () => {
    const frontend = await start('frontend', { BACKEND_URL: `http://127.0.0.1:${await freePort()}`, ...tracedTo() });
    expect((await fetch(`${frontend.baseUrl}/api/users`)).status).toBe(500);
    await stopAll(frontend);
    const server = only(receiver.spans, 'server span', (s) => s.kind === SPAN_KIND.server);
    expect(server).toMatchObject({ name: 'GET /api/users', statusCode: SPAN_STATUS_ERROR });
    expect(server.attributes['http.response.status_code']).toBe(500);
    // One client span per attempt (backend-client.ts retries a refused connection).
    const calls = receiver.spans.filter((s) => s.kind === SPAN_KIND.client);
    expect(calls.length).toBeGreaterThanOrEqual(1);
    for (const call of calls) {
      expectInRequest(receiver.spans, call, server);
      expect(call).toMatchObject({ statusCode: SPAN_STATUS_ERROR, attributes: { 'error.type': 'ECONNREFUSED' } });
    }
  });
});

describe('statement spans on SQLite', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-traces-'));
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('a create is a traced INSERT with db.system.name sqlite, its values nowhere in the trace', async () => {
    const database = await start('database', { DATA_DIR: dataDir, ...tracedTo() });
    const user = { name: 'Traced Person', email: 'traced.person@example.com' };
    const created = await fetch(`${database.baseUrl}/api/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(user),
    });
    expect(created.status).toBe(201);
    // Refused before its handler runs (validation): named after its route all the same.
    const invalid = { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' };
    expect((await fetch(`${database.baseUrl}/api/users`, invalid)).status).toBe(400);
    await stopAll(database);
    const posts = receiver.spans.filter((s) => s.kind === SPAN_KIND.server && s.name === 'POST /api/users');
    expect(posts.map((s) => s.attributes['http.response.status_code'])).toEqual([201, 400]);
    const server = posts[0] as ReceivedSpan;
    const insert = only(receiver.spans, 'INSERT span', (s) => s.name === 'INSERT users');
    expectInRequest(receiver.spans, insert, server);
    expect(insert).toMatchObject({ kind: SPAN_KIND.client, statusCode: 0 });
    expect(insert.attributes).toMatchObject({ 'db.system.name': 'sqlite', 'db.operation.name': 'INSERT', 'db.collection.name': 'users' });
    expect(Object.keys(insert.attributes).sort()).toEqual(sqliteAttributes);
    expect(JSON.stringify(receiver.spans, (_key, value: unknown) => (typeof value === 'bigint' ? String(value) : value))).not.toMatch(
      /traced\.person|Traced Person/,
    );
  });
});

describe('the exporter over a service life', () => {
  it('exports the spans still buffered on SIGTERM', async () => {
    // Ten minutes between exports: only the shutdown can send this span.
    const simple = await start('simple', tracedTo({ OTEL_BSP_SCHEDULE_DELAY: '600000' }));
    expect((await fetch(`${simple.baseUrl}/`)).status).toBe(200);
    expect(receiver.spans).toHaveLength(0);
    await stopAll(simple);
    expect(receiver.spans.map((s) => s.name).sort()).toEqual(['GET /', 'request']);
  });

  it('exits 0 with a collector that never answers, saying the buffered spans were dropped', async () => {
    const silent = await startSilentServer();
    try {
      // A TCP server that never answers (made to stand for a hung PostgreSQL, just as good a hung collector).
      const endpoint = `http://127.0.0.1:${new URL(silent.url).port}`;
      const simple = await start('simple', { OTEL_EXPORTER_OTLP_ENDPOINT: endpoint, OTEL_BSP_SCHEDULE_DELAY: '600000' });
      expect((await fetch(`${simple.baseUrl}/`)).status).toBe(200);
      await stopAll(simple);
      expect(logLines(simple).map((line) => line.msg)).toContainEqual(expect.stringMatching(/^the spans still buffered were dropped/));
    } finally {
      await silent.close();
    }
  });

  it('with the collector down, every request is answered and the failure said on stderr, the exit not held', async () => {
    const closedPort = await freePort();
    // An export gives up after 300 ms (retries included), instead of the exporter's 10 s.
    const env = {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${closedPort}`,
      OTEL_BSP_SCHEDULE_DELAY: '20',
      OTEL_EXPORTER_OTLP_TIMEOUT: '300',
    };
    const simple = await start('simple', env);
    // The SDK's own logger (OTEL_LOG_LEVEL, error unless set) says each failed export.
    const failures = (): string[] => simple.lines.filter((line) => line.includes(`ECONNREFUSED 127.0.0.1:${closedPort}`));
    // Requests until a failure is said, then as many again while exports go on failing.
    let sent = 0;
    for (let more = 50; more > 0; more -= failures().length > 0 ? 1 : 0) {
      expect((await fetch(`${simple.baseUrl}/`)).status).toBe(200);
      sent += 1;
      expect(sent, 'requests before the failure was said').toBeLessThan(5_000);
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    await stopAll(simple);
    expect(failures().length).toBeGreaterThan(0);
    // A refused export fails at once: the exit did not wait out its limit for the collector.
    expect(logLines(simple).map((line) => line.msg)).not.toContainEqual(expect.stringMatching(/did not take them within/));
  });
});

describe('tracing off', () => {
  const reporting = { NODE_OPTIONS: `--import=${join(repoRoot, 'test/e2e/fixtures/report-opentelemetry-imports.mjs')}` };
  // prom-client (the metrics) requires @opentelemetry/api, OpenTelemetry's no-op facade, for its
  // exemplars whatever we do: every other OpenTelemetry package is the SDK's.
  const loaded = (service: ServiceProcess): string[] =>
    service.lines.filter((line) => line.startsWith('opentelemetry module loaded') && !line.includes('/@opentelemetry/api/'));

  it('without an OTLP endpoint no module of the SDK is loaded, nor with OTEL_SDK_DISABLED', async () => {
    for (const env of [{}, { OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url, OTEL_SDK_DISABLED: 'true' }]) {
      const simple = await start('simple', { ...reporting, ...env });
      expect((await fetch(`${simple.baseUrl}/`, { headers: { traceparent: clientTrace().traceparent } })).status).toBe(200);
      await stopAll(simple);
      expect(loaded(simple)).toEqual([]);
      expect(logLines(simple).some((line) => 'trace_id' in line)).toBe(false);
    }
    expect(receiver.spans).toEqual([]);
  });

  it('the same report shows the SDK loaded once an endpoint is set', async () => {
    const simple = await start('simple', { ...reporting, ...tracedTo() });
    await stopAll(simple);
    expect(loaded(simple).some((line) => line.includes('/@opentelemetry/sdk-trace/'))).toBe(true);
  });
});
