import { DatabaseUnavailableError, DuplicateEmailError, type NewUser } from '@sample-services/users/user-store';
import { describe, expect, it } from 'vitest';
import { fakeStore } from '@sample-services/testing/fake-store';
import { parsePrometheusText, sampleValue } from '@sample-services/testing/prometheus-text';
import { createDatabaseApp } from '../src/app.js';

const post = (email: string) => ({ method: 'POST' as const, url: '/api/users', payload: { name: 'Ann', email } });

describe('variant B /metrics', () => {
  it("shows the pool's state and counts failed queries, not a taken email", async () => {
    const create = (user: NewUser) =>
      Promise.reject(
        user.email === 'taken@example.com' ? new DuplicateEmailError(user.email) : new DatabaseUnavailableError(new Error('ECONNREFUSED')),
      );
    const app = createDatabaseApp({ logger: false, store: fakeStore({ create, poolStats: () => ({ total: 10, idle: 7, waiting: 0 }) }) });
    expect((await app.inject(post('taken@example.com'))).statusCode).toBe(409);
    expect((await app.inject(post('ann@example.com'))).statusCode).toBe(503);
    const res = await app.inject({ method: 'GET', url: '/metrics' });
    expect(res.statusCode).toBe(200);
    const families = parsePrometheusText(res.body);
    expect(sampleValue(families, 'db_pool_total_connections')).toBe(10);
    expect(sampleValue(families, 'db_pool_idle_connections')).toBe(7);
    expect(sampleValue(families, 'db_pool_waiting_queries')).toBe(0);
    expect(sampleValue(families, 'db_query_errors_total', { operation: 'create' })).toBe(1);
    await app.close();
  });

  it('has no pool gauges on a store without a pool (SQLite)', async () => {
    const app = createDatabaseApp({ logger: false, store: fakeStore({}) });
    const families = parsePrometheusText((await app.inject({ method: 'GET', url: '/metrics' })).body);
    expect(families.has('db_pool_total_connections')).toBe(false);
    expect(families.get('db_query_errors_total')?.type).toBe('counter');
    await app.close();
  });
});
