import { hostname } from 'node:os';
import { isoUtc } from '@sample-services/testing/contract/common';
import { copierHookContract } from '@sample-services/testing/contract/copier-hook';
import { openApiContract } from '@sample-services/testing/contract/openapi-document';
import { afterAll, describe, expect, it } from 'vitest';
import { createSimpleApp } from '../src/app.js';
import { readConfig } from '../src/config.js';

describe('variant A app (in-process, inject)', () => {
  const app = createSimpleApp({ logger: false, environment: 'staging' });
  afterAll(() => app.close());

  it('GET / greets with the current time and the host name', async () => {
    const before = Date.now();
    const res = await app.inject({ method: 'GET', url: '/' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    const body = res.json<{ message: string; timestamp: string; hostname: string }>();
    expect(Object.keys(body)).toEqual(['message', 'timestamp', 'hostname']);
    expect(body.message).toBe('Hello from Docker!');
    expect(body.timestamp).toMatch(isoUtc);
    expect(Math.abs(Date.parse(body.timestamp) - before)).toBeLessThan(5_000);
    expect(body.hostname).toBe(hostname());
  });

  it('GET /health reports healthy, the process uptime in seconds and the environment it was given', async () => {
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    const body = res.json<{ status: string; uptime: number; environment: string }>();
    expect(Object.keys(body)).toEqual(['status', 'uptime', 'environment']);
    expect(body.status).toBe('healthy');
    expect(body.environment).toBe('staging');
    expect(body.uptime).toBeGreaterThan(0);
    expect(body.uptime).toBeLessThanOrEqual(process.uptime());
  });

  it('GET /ready answers 200 whenever it serves: variant A needs nothing else', async () => {
    const res = await app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"status":"ready"}');
  });

  it('GET /api/users sends the two static users, the same bytes every time', async () => {
    const first = await app.inject({ method: 'GET', url: '/api/users' });
    expect(first.statusCode).toBe(200);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.body).toBe(
      '[{"id":1,"name":"John Doe","email":"john@example.com"},{"id":2,"name":"Jane Smith","email":"jane@example.com"}]',
    );
    expect(first.json()).toEqual([
      { id: 1, name: 'John Doe', email: 'john@example.com' },
      { id: 2, name: 'Jane Smith', email: 'jane@example.com' },
    ]);
    expect((await app.inject({ method: 'GET', url: '/api/users' })).body).toBe(first.body);
  });
});

describe('variant A with METRICS=off', () => {
  it('reads METRICS: on by default, off, and nothing else', () => {
    expect(readConfig({}).metrics).toBe(true);
    expect(readConfig({ METRICS: 'on' }).metrics).toBe(true);
    expect(readConfig({ METRICS: 'off' }).metrics).toBe(false);
    expect(() => readConfig({ METRICS: 'false' })).toThrow('METRICS must be one of on, off, got "false"');
  });

  it('answers GET /metrics 404 JSON without metrics, and serves them as before with them', async () => {
    const without = createSimpleApp({ logger: false, environment: 'production', metrics: false });
    const withMetrics = createSimpleApp({ logger: false, environment: 'production' });
    try {
      const missing = await without.inject({ method: 'GET', url: '/metrics' });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toEqual({ error: 'Not found: GET /metrics' });
      expect((await without.inject({ method: 'GET', url: '/api/users' })).statusCode).toBe(200);
      const scraped = await withMetrics.inject({ method: 'GET', url: '/metrics' });
      expect(scraped.statusCode).toBe(200);
      expect(scraped.body).toContain('# TYPE http_requests_total counter');
    } finally {
      await Promise.all([without.close(), withMetrics.close()]);
    }
  });
});

copierHookContract(() => createSimpleApp({ logger: false, environment: 'staging' }));
openApiContract('simple', () => createSimpleApp({ logger: false, environment: 'test' }));
