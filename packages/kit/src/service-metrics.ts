/**
 * Metrics a service adds for what it depends on: upstream errors (the proxy, the frontend) and
 * its database (pool gauges, failed queries).
 */
import { Counter, Gauge } from 'prom-client';
import { metricsOf, processRegistry } from './metrics.js';
import type { App } from './server.js';

/** Why a call to an upstream (the proxy's web, the frontend's backend) failed. */
export type UpstreamErrorKind = 'refused' | 'timeout' | 'reset' | 'bad_status' | 'other';

const kindByCode: Record<string, UpstreamErrorKind> = {
  ECONNREFUSED: 'refused',
  EHOSTUNREACH: 'refused',
  ENETUNREACH: 'refused',
  ENOTFOUND: 'refused',
  EAI_AGAIN: 'refused',
  ETIMEDOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  ECONNABORTED: 'reset',
  UND_ERR_SOCKET: 'reset',
};

/** The kind of a failed upstream call from its error's code (Node's or undici's). */
export function upstreamErrorKind(error: unknown): UpstreamErrorKind {
  const code = (error as { code?: unknown } | null)?.code;
  return (typeof code === 'string' ? kindByCode[code] : undefined) ?? 'other';
}

let upstreamErrors: Counter<'kind'> | undefined;

/**
 * Counts failed calls to the service's upstream by kind. Per process, not per app: a process runs
 * one service, and the frontend's backend client is made before its app. The counter appears in
 * /metrics from the first call of this (services without an upstream do not show it), every kind
 * at 0, so that a rate() sees the first error.
 */
export function upstreamErrorCounter(): (kind: UpstreamErrorKind) => void {
  if (upstreamErrors === undefined) {
    upstreamErrors = new Counter({
      name: 'upstream_errors_total',
      help: 'Failed calls to the upstream (proxy: web; frontend: backend), by kind: refused, timeout, reset, bad_status (5xx), other',
      labelNames: ['kind'],
      registers: [processRegistry],
    });
    for (const kind of ['refused', 'timeout', 'reset', 'bad_status', 'other'] as const) upstreamErrors.inc({ kind }, 0);
  }
  const counter = upstreamErrors;
  return (kind) => counter.inc({ kind });
}

/** A connection pool's state, read at each scrape. */
export interface PoolStats {
  /** Connections open, idle or in use. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/**
 * The store of a database service, metered: its pool's gauges, read at each scrape (a store with
 * `poolStats`, i.e. PostgreSQL; SQLite has no pool, and no gauges rather than gauges that say 0),
 * and db_query_errors_total by operation (the store's method) for each rejection isQueryError
 * accepts (not, say, a duplicate email, which is the database doing its job).
 */
export function meterStore<Store extends object & { poolStats?: () => PoolStats }>(
  app: App,
  store: Store,
  isQueryError: (error: unknown) => boolean,
): Store {
  const { registry } = metricsOf(app);
  const { poolStats } = store;
  const help = { total: 'Pool connections open', idle: 'Pool connections idle', waiting: 'Queries waiting for a free pool connection' };
  if (poolStats !== undefined) {
    for (const field of ['total', 'idle', 'waiting'] as const) {
      new Gauge({
        name: field === 'waiting' ? 'db_pool_waiting_queries' : `db_pool_${field}_connections`,
        help: help[field],
        registers: [registry],
        collect() {
          this.set(poolStats()[field]);
        },
      });
    }
  }
  const errors = new Counter({
    name: 'db_query_errors_total',
    help: 'Queries that failed (database unreachable, too slow, or the query refused), by operation',
    labelNames: ['operation'],
    registers: [registry],
  });
  return withRejectionsCounted(store, (operation, error) => {
    if (operation !== 'close' && isQueryError(error)) errors.inc({ operation });
  });
}

/**
 * The target with each of its methods wrapped so that a rejection of the promise it returns is told
 * to onRejection (e.g. to count failed queries) and then passed on unchanged; what is not a promise
 * comes back as it is. Every method, so that one added to the target later is counted too.
 */
function withRejectionsCounted<T extends object>(target: T, onRejection: (method: string, error: unknown) => void): T {
  const wrapper: Record<string, unknown> = Object.create(target) as Record<string, unknown>;
  for (const name in target) {
    const method: unknown = target[name];
    if (typeof method !== 'function') continue;
    wrapper[name] = (...args: unknown[]): unknown => {
      const result: unknown = method.apply(target, args);
      if (!(result instanceof Promise)) return result;
      return result.catch((error: unknown) => {
        onRejection(name, error);
        throw error;
      });
    };
  }
  return wrapper as T;
}
