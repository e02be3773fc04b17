import { ConfigError, readInt, readPort, readServiceConfig, readString, readUrl, type Env, type ServiceConfig } from '@sample-services/kit';
import { service } from './service.js';

export interface ProxyConfig extends ServiceConfig {
  upstream: URL;
  /** Where GET /metrics is served, apart from the forwarded port; undefined: not served. */
  metricsPort: number | undefined;
  upstreamTimeoutMs: number;
  upstreamResolveMs: number;
}

/** METRICS_PORT: a port (0: any free one), or `off`; never the forwarded PORT. */
function readMetricsPort(env: Env, port: number): number | undefined {
  if (readString(env, 'METRICS_PORT', '9100') === 'off') return undefined;
  let metricsPort: number;
  try {
    metricsPort = readPort(env, 'METRICS_PORT', 9100);
  } catch {
    throw new ConfigError(`METRICS_PORT must be a port from 0 to 65535 or "off", got "${env.METRICS_PORT ?? ''}"`);
  }
  if (metricsPort !== 0 && metricsPort === port) {
    throw new ConfigError(`METRICS_PORT must differ from PORT (${port}): every path of PORT is forwarded to the upstream`);
  }
  return metricsPort;
}

/**
 * UPSTREAM_URL (default http://web:3000, the spec's `web` on port 3000), UPSTREAM_TIMEOUT_MS (default 60000, nginx's
 * proxy_read_timeout; the connect takes at most 2 s of it) and UPSTREAM_RESOLVE_MS (default 1000,
 * from 100 to 3600000: how often the upstream's host name is resolved again, as nginx's
 * `resolver ... valid=`, so that `--scale web=3` replicas get traffic and a recreated `web` is
 * found within about that long; a failed resolution keeps the last addresses; an IP address
 * or `localhost` is never resolved). METRICS_PORT (default 9100, `off` for none): the port of the
 * proxy's own GET /metrics, apart from its PORT, every path of which is forwarded (see app.ts).
 */
export function readConfig(env: Env): ProxyConfig {
  const common = readServiceConfig(env, service);
  const upstream = readUrl(env, 'UPSTREAM_URL', 'http://web:3000', ['http:']);
  // Every request keeps its own path, so a path here would be silently ignored: refuse it.
  if (upstream.pathname !== '/' || upstream.search !== '' || upstream.hash !== '' || upstream.username !== '') {
    throw new ConfigError(
      `UPSTREAM_URL must be an origin like http://web:3000, without path, query or credentials, got "${upstream.href}"`,
    );
  }
  return {
    ...common,
    upstream,
    upstreamTimeoutMs: readInt(env, 'UPSTREAM_TIMEOUT_MS', 60_000, 1, 3_600_000),
    upstreamResolveMs: readInt(env, 'UPSTREAM_RESOLVE_MS', 1000, 100, 3_600_000),
    metricsPort: readMetricsPort(env, common.port),
  };
}
