/**
 * One request followed across hops by its X-Request-Id, in the log lines of every service it went
 * through (LOG_LEVEL=debug logs every request; at info only errors, which carry the id too): the
 * TypeScript proxy and web, nginx and web, the frontend and the backend. Real processes, real nginx.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '@sample-services/testing/free-port';
import { nginxInstalled, startNginx, type NginxProcess } from '@sample-services/testing/nginx';
import { parsePrometheusText, sampleValue } from '@sample-services/testing/prometheus-text';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

/** The JSON log lines of a process that carry this request id. */
function linesWithId(service: ServiceProcess, id: string): Record<string, unknown>[] {
  return service.lines
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.reqId === id);
}

/** Waits for the lines a service writes once the response is sent (the "request completed" line). */
async function untilLogged(service: ServiceProcess, id: string, count: number): Promise<Record<string, unknown>[]> {
  for (const deadline = Date.now() + 5000; Date.now() < deadline; await new Promise((resolve) => setTimeout(resolve, 20))) {
    const lines = linesWithId(service, id);
    if (lines.length >= count) return lines;
  }
  return linesWithId(service, id);
}

const debug = { LOG_LEVEL: 'debug' };

describe('a request id through the TypeScript proxy and web', () => {
  let web: ServiceProcess;
  let proxy: ServiceProcess;
  let metricsPort: number;
  beforeAll(async () => {
    web = await startService('simple', debug);
    metricsPort = await freePort();
    proxy = await startService('proxy', { ...debug, UPSTREAM_URL: web.baseUrl, METRICS_PORT: String(metricsPort) });
  });
  afterAll(async () => {
    await proxy?.stop();
    await web?.stop();
  });

  it("is the client's, in both services' lines for that request and in the answer", async () => {
    const res = await fetch(`${proxy.baseUrl}/api/users`, { headers: { 'x-request-id': 'follow-me-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('follow-me-1');
    // Fastify's two lines per request at debug: incoming request, request completed.
    for (const service of [proxy, web]) {
      const lines = await untilLogged(service, 'follow-me-1', 2);
      expect(lines.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
    }
  });

  it('is made by the proxy when the client sent a malformed one, and web logs the same', async () => {
    const res = await fetch(`${proxy.baseUrl}/`, { headers: { 'x-request-id': 'no spaces allowed' } });
    const id = res.headers.get('x-request-id') ?? '';
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    expect(await untilLogged(proxy, id, 2)).toHaveLength(2);
    expect(await untilLogged(web, id, 2)).toHaveLength(2);
  });

  it("serves the proxy's own metrics on METRICS_PORT and web's through the proxy", async () => {
    const own = parsePrometheusText(await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text());
    expect(sampleValue(own, 'http_requests_total', { route: '/*', status_code: '200' })).toBeGreaterThan(0);
    expect(own.has('upstream_errors_total')).toBe(true);
    const webs = parsePrometheusText(await (await fetch(`${proxy.baseUrl}/metrics`)).text());
    expect(sampleValue(webs, 'http_requests_total', { route: '/api/users', status_code: '200' })).toBeGreaterThan(0);
    expect(webs.has('upstream_errors_total')).toBe(false);
  });
});

describe.skipIf(!nginxInstalled() && process.env.CI !== 'true')('a request id through nginx (deploy/nginx/nginx.conf) and web', () => {
  let web: ServiceProcess;
  let nginx: NginxProcess;
  beforeAll(async () => {
    web = await startService('simple', debug);
    nginx = await startNginx({ upstreamPort: web.port });
  });
  afterAll(async () => {
    await nginx?.stop();
    await web?.stop();
  });

  it("passes the client's well-formed id to web and returns it once", async () => {
    const res = await fetch(`${nginx.baseUrl}/health`, { headers: { 'x-request-id': 'through-nginx-7' } });
    expect(res.headers.get('x-request-id')).toBe('through-nginx-7');
    expect(await untilLogged(web, 'through-nginx-7', 2)).toHaveLength(2);
  });

  it("replaces a malformed one with nginx's $request_id, which web keeps and logs", async () => {
    const res = await fetch(`${nginx.baseUrl}/health`, { headers: { 'x-request-id': 'x'.repeat(129) } });
    const id = res.headers.get('x-request-id') ?? '';
    expect(id).toMatch(/^[0-9a-f]{32}$/);
    expect(await untilLogged(web, id, 2)).toHaveLength(2);
  });

  it("returns the id on nginx's own errors too", async () => {
    const res = await fetch(`${nginx.baseUrl}/upload`, {
      method: 'POST',
      body: 'x'.repeat(2 * 1024 * 1024),
      headers: { 'x-request-id': 'too-big-1' },
    });
    expect(res.status).toBe(413);
    expect(res.headers.get('x-request-id')).toBe('too-big-1');
  });
});

describe('a request id through the frontend and the backend', () => {
  let dataDir: string;
  let backend: ServiceProcess;
  let frontend: ServiceProcess;
  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'request-ids-'));
    backend = await startService('backend', { ...debug, DATA_DIR: dataDir });
    frontend = await startService('frontend', { BACKEND_URL: backend.baseUrl, BACKEND_TIMEOUT_MS: '1000' });
  });
  afterAll(async () => {
    await frontend?.stop();
    await backend?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("is in the backend's lines for the call the frontend made for that request", async () => {
    const res = await fetch(`${frontend.baseUrl}/api/users?limit=5`, { headers: { 'x-request-id': 'two-tier-1' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-request-id')).toBe('two-tier-1');
    const lines = await untilLogged(backend, 'two-tier-1', 2);
    expect(lines.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
    expect(lines[0]).toMatchObject({ req: { url: '/api/users?limit=5' } });
  });

  it("is on the frontend's error line (at info level) when the backend is down", async () => {
    await backend.stop();
    const res = await fetch(`${frontend.baseUrl}/api/users`, { headers: { 'x-request-id': 'backend-down-1' } });
    expect(res.status).toBe(500);
    expect(res.headers.get('x-request-id')).toBe('backend-down-1');
    const [line] = await untilLogged(frontend, 'backend-down-1', 1);
    expect(line).toMatchObject({ level: 50, msg: 'could not fetch users from the backend' });
    const metrics = parsePrometheusText(await (await fetch(`${frontend.baseUrl}/metrics`)).text());
    // A refused GET is tried three times before the 500 (BACKEND_ATTEMPTS), and each attempt counts.
    expect(sampleValue(metrics, 'upstream_errors_total', { kind: 'refused' })).toBe(3);
  });
});
