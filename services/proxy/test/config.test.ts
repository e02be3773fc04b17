import { ConfigError } from '@sample-services/kit/config';
import { describe, expect, it } from 'vitest';
import { readConfig } from '../src/config.js';

describe('readConfig', () => {
  it("defaults to the spec's upstream web:3000, the kit's 10,000 connections, and 60 s timeout", () => {
    const config = readConfig({});
    expect(config.upstream.href).toBe('http://web:3000/');
    expect(config.maxConnections).toBe(10_000);
    expect(config.upstreamTimeoutMs).toBe(60_000);
    expect(config.upstreamResolveMs).toBe(1000);
    expect(config.metricsPort).toBe(9100);
  });

  it('reads METRICS_PORT: a port, 0 for any free one, or off', () => {
    expect(readConfig({ METRICS_PORT: '9200' }).metricsPort).toBe(9200);
    expect(readConfig({ METRICS_PORT: '0', PORT: '0' }).metricsPort).toBe(0);
    expect(readConfig({ METRICS_PORT: 'off' }).metricsPort).toBeUndefined();
  });

  it('reads UPSTREAM_URL, MAX_CONNECTIONS, UPSTREAM_TIMEOUT_MS and UPSTREAM_RESOLVE_MS', () => {
    const config = readConfig({
      UPSTREAM_URL: 'http://127.0.0.1:8080/',
      MAX_CONNECTIONS: '2',
      UPSTREAM_TIMEOUT_MS: '500',
      UPSTREAM_RESOLVE_MS: '10000',
    });
    expect(config.upstream.origin).toBe('http://127.0.0.1:8080');
    expect(config.maxConnections).toBe(2);
    expect(config.upstreamTimeoutMs).toBe(500);
    expect(config.upstreamResolveMs).toBe(10_000);
  });

  it.each([
    ['UPSTREAM_URL', 'https://web:3000', 'UPSTREAM_URL must start with http://'],
    ['UPSTREAM_URL', 'not a url', 'UPSTREAM_URL must be a URL'],
    ['UPSTREAM_URL', 'http://web:3000/api', 'UPSTREAM_URL must be an origin'],
    ['UPSTREAM_URL', 'http://web:3000?x=1', 'UPSTREAM_URL must be an origin'],
    ['UPSTREAM_URL', 'http://user:pw@web:3000', 'UPSTREAM_URL must be an origin'],
    ['MAX_CONNECTIONS', '0', 'MAX_CONNECTIONS must be an integer from 1'],
    ['MAX_CONNECTIONS', 'many', 'MAX_CONNECTIONS must be an integer from 1'],
    ['UPSTREAM_TIMEOUT_MS', '0', 'UPSTREAM_TIMEOUT_MS must be an integer from 1'],
    ['UPSTREAM_RESOLVE_MS', '99', 'UPSTREAM_RESOLVE_MS must be an integer from 100 to 3600000'],
    ['UPSTREAM_RESOLVE_MS', '1s', 'UPSTREAM_RESOLVE_MS must be an integer from 100 to 3600000'],
    ['METRICS_PORT', 'none', 'METRICS_PORT must be a port from 0 to 65535 or "off", got "none"'],
    ['METRICS_PORT', '65536', 'METRICS_PORT must be a port from 0 to 65535 or "off"'],
    ['METRICS_PORT', '80', 'METRICS_PORT must differ from PORT (80)'],
  ])('refuses %s=%s', (name, value, message) => {
    expect(() => readConfig({ [name]: value })).toThrow(ConfigError);
    expect(() => readConfig({ [name]: value })).toThrow(message);
  });
});
