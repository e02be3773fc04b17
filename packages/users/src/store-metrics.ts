/** The metrics of a service's user store: its pool's gauges and its failed queries, in the app's /metrics. */
import { metricsOf } from '@sample-services/kit/metrics';
import type { App } from '@sample-services/kit/server';
import { Counter, Gauge } from 'prom-client';
import type { PoolStats } from './user-store.js';

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
