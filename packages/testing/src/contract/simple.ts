import { documentedFetch } from './documented.js';
import { expect, it } from 'vitest';
import { isoUtc } from './common.js';

export interface SimpleExpectations {
  /** NODE_ENV the service runs with, reported by /health. */
  environment: string;
  /** The host name that serves the greeting, when the caller knows it. */
  hostname?: string;
}

/** Variant A (spec 2.2, 2.3, 4.1), against any base URL: in-process, local process, container, proxy. */
export function simpleContract(baseUrl: () => string, expected: SimpleExpectations): void {
  it('GET / greets with the current time and the serving host name', async () => {
    const before = Date.now();
    const res = await documentedFetch(`${baseUrl()}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['hostname', 'message', 'timestamp']);
    expect(body.message).toBe('Hello from Docker!');
    expect(body.timestamp).toMatch(isoUtc);
    expect(Math.abs(Date.parse(body.timestamp as string) - before)).toBeLessThan(5_000);
    expect(typeof body.hostname).toBe('string');
    expect(body.hostname).not.toBe('');
    if (expected.hostname !== undefined) expect(body.hostname).toBe(expected.hostname);
  });

  it('GET /health reports healthy, the uptime in seconds and NODE_ENV', async () => {
    const res = await documentedFetch(`${baseUrl()}/health`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as Record<string, unknown>;
    expect(Object.keys(body).sort()).toEqual(['environment', 'status', 'uptime']);
    expect(body.status).toBe('healthy');
    expect(body.environment).toBe(expected.environment);
    expect(typeof body.uptime).toBe('number');
    expect(body.uptime).toBeGreaterThan(0);
    expect(body.uptime).toBeLessThan(24 * 3600);
  });

  it('GET /api/users lists the two static users with id, name and email only', async () => {
    const res = await documentedFetch(`${baseUrl()}/api/users`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe(
      '[{"id":1,"name":"John Doe","email":"john@example.com"},{"id":2,"name":"Jane Smith","email":"jane@example.com"}]',
    );
  });

  it('HEAD / answers like GET without a body', async () => {
    const res = await documentedFetch(`${baseUrl()}/`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('');
  });
}
