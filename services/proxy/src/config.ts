import { readFileSync } from 'node:fs';
import {
  ConfigError,
  readInt,
  readPort,
  readServiceConfig,
  readString,
  readUrl,
  type Env,
  type ServiceConfig,
} from '@sample-services/kit/config';
import { service } from './service.js';

export interface ProxyConfig extends ServiceConfig {
  upstream: URL;
  /** Where GET /metrics is served, apart from the forwarded port; undefined: not served. */
  metricsPort: number | undefined;
  upstreamTimeoutMs: number;
  upstreamResolveMs: number;
  /** HTTPS: the certificate and key (PEM) from TLS_CERT_FILE and TLS_KEY_FILE, its port, and HSTS; undefined: plain HTTP only. */
  tls: TlsConfig | undefined;
}

export interface TlsConfig {
  cert: Buffer;
  key: Buffer;
  /** TLS_PORT: where HTTPS (HTTP/2 and HTTP/1.1) is served; PORT then redirects there. */
  port: number;
  /** HSTS_MAX_AGE: Strict-Transport-Security's max-age on HTTPS answers, in seconds; 0: none. */
  hstsMaxAge: number;
}

function readPemFile(env: Env, name: string): Buffer {
  const path = env[name] as string;
  try {
    return readFileSync(path);
  } catch (error) {
    throw new ConfigError(`${name} must name a readable file, got "${path}" (${(error as NodeJS.ErrnoException).code ?? String(error)})`);
  }
}

/**
 * TLS_CERT_FILE and TLS_KEY_FILE (both or neither): the certificate chain and its key, PEM, read once here
 * (scripts/local-cert.sh makes a pair). TLS_PORT (default 443, never PORT nor METRICS_PORT) and
 * HSTS_MAX_AGE (default 0: no Strict-Transport-Security) apply only with them.
 */
function readTlsConfig(env: Env, port: number, metricsPort: number | undefined): TlsConfig | undefined {
  // Read and checked with or without a certificate, as every variable is read at start-up.
  // Never 0 (any free port): the plain port's redirect names this one.
  const tlsPort = readInt(env, 'TLS_PORT', 443, 1, 65_535);
  const hstsMaxAge = readInt(env, 'HSTS_MAX_AGE', 0, 0, 63_072_000);
  const given = ['TLS_CERT_FILE', 'TLS_KEY_FILE'].filter((name) => (env[name] ?? '') !== '');
  if (given.length === 0) return undefined;
  if (given.length === 1) throw new ConfigError(`TLS_CERT_FILE and TLS_KEY_FILE must be set together, got only ${given[0]}`);
  if (tlsPort === port || tlsPort === metricsPort) {
    throw new ConfigError(`TLS_PORT must differ from PORT (${port}) and METRICS_PORT, got "${tlsPort}"`);
  }
  return { cert: readPemFile(env, 'TLS_CERT_FILE'), key: readPemFile(env, 'TLS_KEY_FILE'), port: tlsPort, hstsMaxAge };
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
 * TLS_CERT_FILE, TLS_KEY_FILE, TLS_PORT, HSTS_MAX_AGE: HTTPS (readTlsConfig).
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
  const metricsPort = readMetricsPort(env, common.port);
  return {
    ...common,
    upstream,
    upstreamTimeoutMs: readInt(env, 'UPSTREAM_TIMEOUT_MS', 60_000, 1, 3_600_000),
    upstreamResolveMs: readInt(env, 'UPSTREAM_RESOLVE_MS', 1000, 100, 3_600_000),
    metricsPort,
    tls: readTlsConfig(env, common.port, metricsPort),
  };
}
