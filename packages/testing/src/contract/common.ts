import { documentedFetch } from './documented.js';
import { expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '../prometheus-text.js';

/** An ISO 8601 timestamp in UTC with milliseconds and `Z`, as every service writes them. */
export const isoUtc = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** What a kept or made request id looks like (the services' rule, and nginx's 32 hex digits). */
const wellFormedId = /^[A-Za-z0-9._:-]{1,128}$/;

/** Checks every service shares (spec 4: JSON everywhere, cross-origin access, request ids, metrics). */
export function commonContract(baseUrl: () => string): void {
  it('answers an unknown path with 404 and a JSON error', async () => {
    const res = await documentedFetch(`${baseUrl()}/no/such/path?x=1`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error: 'Not found: GET /no/such/path' });
  });

  it('answers a wrong method on a known path with 405, an Allow header and a JSON error', async () => {
    const res = await documentedFetch(`${baseUrl()}/health`, { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(await res.json()).toEqual({ error: 'Method DELETE is not allowed on /health' });
  });

  // QUERY is a safe method with a body (RFC 10008) that no route here takes; PROPFIND a WebDAV one.
  it.each(['QUERY', 'PROPFIND'])('answers %s as any method a path does not take: 405 with Allow, or 404', async (method) => {
    const known = await fetch(`${baseUrl()}/health`, { method });
    expect(known.status).toBe(405);
    expect(known.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(await known.json()).toEqual({ error: `Method ${method} is not allowed on /health` });
    const unknown = await fetch(`${baseUrl()}/no/such/path`, { method });
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({ error: `Not found: ${method} /no/such/path` });
  });

  it('allows every origin, on simple requests and on preflight', async () => {
    const simple = await documentedFetch(`${baseUrl()}/health`, { headers: { origin: 'https://example.org' } });
    expect(simple.headers.get('access-control-allow-origin')).toBe('*');
    const preflight = await documentedFetch(`${baseUrl()}/health`, {
      method: 'OPTIONS',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'GET', 'access-control-request-headers': 'x-trace' },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*');
    expect(preflight.headers.get('access-control-allow-methods')?.split(', ')).toContain('GET');
    expect(preflight.headers.get('access-control-allow-headers')).toBe('x-trace');
  });

  it('answers GET /ready with 200 {"status":"ready"} while it and what it needs are up', async () => {
    const res = await documentedFetch(`${baseUrl()}/ready`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ status: 'ready' });
  });

  it('does not advertise its framework', async () => {
    const res = await documentedFetch(`${baseUrl()}/health`);
    expect(res.headers.get('x-powered-by')).toBeNull();
  });

  it('returns the X-Request-Id a client sent when well formed, and one of its own otherwise', async () => {
    const kept = await documentedFetch(`${baseUrl()}/health`, { headers: { 'x-request-id': 'contract-Check_1.2:3' } });
    expect(kept.headers.get('x-request-id')).toBe('contract-Check_1.2:3');
    for (const malformed of ['x'.repeat(129), 'two words', '<script>']) {
      const replaced = (await documentedFetch(`${baseUrl()}/health`, { headers: { 'x-request-id': malformed } })).headers.get(
        'x-request-id',
      );
      expect(replaced).toMatch(wellFormedId);
      expect(replaced).not.toBe(malformed);
    }
    const made = await documentedFetch(`${baseUrl()}/no/such/path`);
    expect(made.headers.get('x-request-id')).toMatch(wellFormedId);
  });

  it('serves GET /metrics in the Prometheus text format, counting requests by route template, not itself', async () => {
    await documentedFetch(`${baseUrl()}/health`);
    const res = await documentedFetch(`${baseUrl()}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/plain; version=0.0.4; charset=utf-8');
    const families = parsePrometheusText(await res.text());
    expect(sampleValue(families, 'http_requests_total', { method: 'GET', route: '/health', status_code: '200' })).toBeGreaterThan(0);
    expect(sampleValue(families, 'http_request_duration_seconds_count', { route: '/health' })).toBeGreaterThan(0);
    expect(sampleValue(families, 'http_requests_total', { route: '/metrics' })).toBeUndefined();
    expect(families.get('http_requests_in_flight')?.type).toBe('gauge');
    expect(families.get('process_cpu_seconds_total')?.type).toBe('counter');
    expect(families.get('nodejs_eventloop_lag_seconds')?.type).toBe('gauge');
  });
}
