import { createServer, type App } from '@sample-services/kit/server';
import { metricsOf, metricsRoute } from '@sample-services/kit/metrics';
import { parsePrometheusText, sampleValue } from '@sample-services/testing/prometheus-text';
import { afterEach, describe, expect, it } from 'vitest';
import { meterStore } from '../src/store-metrics.js';

let app: App | undefined;

afterEach(async () => {
  await app?.close();
  app = undefined;
});

describe('meterStore', () => {
  it("adds the pool's gauges and counts failed queries by operation, not those isQueryError refuses", async () => {
    app = createServer({ logger: false, api: { title: 'test', description: 'store metrics' } });
    void app.register(metricsRoute);
    const store = meterStore(
      app,
      {
        page: async (fail: boolean) => {
          if (fail) throw new Error('connection refused');
          return 'page';
        },
        create: async () => {
          throw new Error('duplicate');
        },
        size: () => 3,
        poolStats: () => ({ total: 4, idle: 3, waiting: 1 }),
      },
      (error) => (error as Error).message !== 'duplicate',
    );
    expect(store.size()).toBe(3);
    await expect(store.create()).rejects.toThrow('duplicate');
    expect(await store.page(false)).toBe('page');
    await expect(store.page(true)).rejects.toThrow('connection refused');
    const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
    const families = parsePrometheusText(await (await fetch(`${baseUrl}/metrics`)).text());
    expect(sampleValue(families, 'db_pool_total_connections')).toBe(4);
    expect(sampleValue(families, 'db_pool_idle_connections')).toBe(3);
    expect(sampleValue(families, 'db_pool_waiting_queries')).toBe(1);
    expect(sampleValue(families, 'db_query_errors_total', { operation: 'page' })).toBe(1);
    expect(sampleValue(families, 'db_query_errors_total', { operation: 'create' })).toBeUndefined();
    expect(metricsOf(app).registry.getSingleMetric('db_pool_total_connections')).toBeDefined();
  });

  it('adds no pool gauges for a store without a pool', async () => {
    app = createServer({ logger: false, api: { title: 'test', description: 'store metrics' } });
    meterStore(app, { ping: async () => true }, () => true);
    expect(metricsOf(app).registry.getSingleMetric('db_pool_total_connections')).toBeUndefined();
    expect(metricsOf(app).registry.getSingleMetric('db_query_errors_total')).toBeDefined();
  });
});
