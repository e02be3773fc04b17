import { describe, expect, it } from 'vitest';
import { copierHookContract } from '@sample-services/testing/contract/copier-hook';
import { openApiContract } from '@sample-services/testing/contract/openapi-document';
import { fakeStore } from '@sample-services/testing/fake-store';
import { createBackendApp } from '../src/app.js';

describe('variant C backend app (in-process, fake store)', () => {
  it('reports service and database in that order, disconnected when the probe fails', async () => {
    const app = createBackendApp({ logger: false, store: fakeStore({ ping: async () => false }) });
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.body).toBe('{"status":"healthy","service":"backend","database":"disconnected"}');
    await app.close();
  });

  it('is ready while the database answers, 503 while the probe fails', async () => {
    let up = true;
    const app = createBackendApp({ logger: false, store: fakeStore({ ping: async () => up }) });
    expect((await app.inject({ method: 'GET', url: '/ready' })).body).toBe('{"status":"ready"}');
    up = false;
    const res = await app.inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'Not ready: the database is unreachable' });
    await app.close();
  });

  it('lists without ever creating: POST is 405 and does not reach the store', async () => {
    const app = createBackendApp({ logger: false, store: fakeStore({ page: async () => ({ json: '', lastId: undefined, more: false }) }) });
    expect((await app.inject({ method: 'GET', url: '/api/users' })).body).toBe('[]');
    const res = await app.inject({ method: 'POST', url: '/api/users', payload: { name: 'A', email: 'a@b.c' } });
    expect(res.statusCode).toBe(405);
    await app.close();
  });
});

copierHookContract(() => createBackendApp({ logger: false, store: fakeStore({}) }));
openApiContract('backend', () => createBackendApp({ logger: false, store: fakeStore({}) }));
