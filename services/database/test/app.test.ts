import { request } from 'node:http';
import { Writable } from 'node:stream';
import { DatabaseUnavailableError, DuplicateEmailError, type NewUser } from '@sample-services/users/user-store';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { copierHookContract } from '@sample-services/testing/contract/copier-hook';
import { openApiContract } from '@sample-services/testing/contract/openapi-document';
import { fakeStore } from '@sample-services/testing/fake-store';
import { createDatabaseApp } from '../src/app.js';

/** A logger whose JSON lines the test can read. */
function capturingLogger(): { logger: pino.Logger; lines: () => Record<string, unknown>[] } {
  const chunks: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _enc, done) => done(void chunks.push(chunk.toString())) });
  return {
    logger: pino(stream),
    lines: () =>
      chunks
        .join('')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}

const post = (payload: unknown) => ({ method: 'POST' as const, url: '/api/users', payload: payload as Record<string, unknown> });

describe('variant B app (in-process, fake store)', () => {
  it('answers 503 with a JSON error and logs the cause when the database is unavailable', async () => {
    const { logger, lines } = capturingLogger();
    const down = () => Promise.reject(new DatabaseUnavailableError(new Error('connect ECONNREFUSED 10.0.0.9:5432')));
    const app = createDatabaseApp({ logger, store: fakeStore({ page: down, create: down }) });
    for (const request of [{ method: 'GET' as const, url: '/api/users' }, post({ name: 'A', email: 'a@b.c' })]) {
      const res = await app.inject(request);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ error: 'Database unavailable; try again later' });
    }
    expect(JSON.stringify(lines())).toContain('connect ECONNREFUSED 10.0.0.9:5432');
    await app.close();
  });

  it('answers 409 for a duplicate and 500 without internals for an unexpected store error', async () => {
    const app = createDatabaseApp({
      logger: false,
      store: fakeStore({
        create: (user: NewUser) => Promise.reject(new DuplicateEmailError(user.email)),
        page: () => Promise.reject(new Error('relation "users" does not exist')),
      }),
    });
    const duplicate = await app.inject(post({ name: 'A', email: 'a@b.c' }));
    expect(duplicate.statusCode).toBe(409);
    expect(duplicate.json()).toEqual({ error: 'A user with this email already exists' });
    const broken = await app.inject({ method: 'GET', url: '/api/users' });
    expect(broken.statusCode).toBe(500);
    expect(broken.json()).toEqual({ error: 'Internal server error' });
    await app.close();
  });

  it('passes the trimmed user to the store and never calls it for a bad body', async () => {
    const created: NewUser[] = [];
    const store = fakeStore({
      create: async (user) => {
        created.push(user);
        return { id: 7, ...user, created_at: '2026-01-02T03:04:05.678Z' };
      },
    });
    const app = createDatabaseApp({ logger: false, store });
    expect((await app.inject(post({ name: '', email: 'a@b.c' }))).statusCode).toBe(400);
    const res = await app.inject(post({ name: ' Ann ', email: 'ann@b.c ' }));
    expect(res.statusCode).toBe(201);
    expect(res.body).toBe('{"id":7,"name":"Ann","email":"ann@b.c","created_at":"2026-01-02T03:04:05.678Z"}');
    expect(created).toEqual([{ name: 'Ann', email: 'ann@b.c' }]);
    await app.close();
    expect(store.closed).toBe(true);
  });

  it('reports the database as disconnected when the probe fails, still with 200', async () => {
    const app = createDatabaseApp({ logger: false, store: fakeStore({ ping: async () => false }) });
    const res = await app.inject({ method: 'GET', url: '/health' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ status: 'healthy', database: 'disconnected' });
    await app.close();
  });

  it('is ready while the database answers; 503 naming it while the probe fails or throws', async () => {
    let probe = (): Promise<boolean> => Promise.resolve(true);
    const app = createDatabaseApp({ logger: false, store: fakeStore({ ping: () => probe() }) });
    const ready = await app.inject({ method: 'GET', url: '/ready' });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({ status: 'ready' });
    for (const failing of [() => Promise.resolve(false), () => Promise.reject(new Error('connect ECONNREFUSED'))]) {
      probe = failing;
      const res = await app.inject({ method: 'GET', url: '/ready' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ error: expect.stringMatching(/^Not ready: /) as unknown });
    }
    probe = () => Promise.resolve(false);
    expect((await app.inject({ method: 'GET', url: '/ready' })).json()).toEqual({ error: 'Not ready: the database is unreachable' });
    probe = () => Promise.resolve(true);
    expect((await app.inject({ method: 'GET', url: '/ready' })).statusCode).toBe(200);
    await app.close();
  });

  describe('a list longer than one batch', () => {
    const user = (id: number): string =>
      JSON.stringify({ id, name: `U${id}`, email: `u${id}@x.io`, created_at: '2026-01-02T03:04:05.678Z' });
    /** Pages of one user each, up to `count`; the page after `failAfter` fails. */
    const pagedStore = (count: number, failAfter = Infinity) =>
      fakeStore({
        page: async (after) => {
          if (after >= failAfter) throw new DatabaseUnavailableError(new Error('Connection terminated unexpectedly'));
          const id = after + 1;
          return { json: user(id), lastId: id, more: id < count };
        },
      });
    const get = (url: string, path: string): Promise<{ status: number; body: string; error?: Error }> =>
      new Promise((resolve, reject) => {
        request(`${url}${path}`, (res) => {
          let body = '';
          res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
          res.on('end', () => resolve({ status: res.statusCode!, body }));
          res.on('error', (error) => resolve({ status: res.statusCode!, body, error }));
        })
          .on('error', reject)
          .end();
      });

    it('streams every batch as one JSON array', async () => {
      const app = createDatabaseApp({ logger: false, store: pagedStore(3) });
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const res = await get(url, '/api/users');
      expect(res).toEqual({ status: 200, body: `[${user(1)},${user(2)},${user(3)}]` });
      await app.close();
    });

    it('cuts the response when a later batch fails, never ending it as a shorter array, and logs the cause', async () => {
      const { logger, lines } = capturingLogger();
      const app = createDatabaseApp({ logger, store: pagedStore(5, 2) });
      const url = await app.listen({ port: 0, host: '127.0.0.1' });
      const res = await get(url, '/api/users');
      expect(res.status).toBe(200);
      expect(res.error).toBeDefined();
      expect(res.body).toBe(`[${user(1)},${user(2)}`);
      const cut = lines().find((line) => line.msg === 'user list cut short: the database failed while it was being sent');
      expect(cut).toMatchObject({ level: 50, lastId: 2 });
      expect(JSON.stringify(cut)).toContain('Connection terminated unexpectedly');
      await app.close();
    });

    it('answers 503 JSON when the first batch fails: nothing was sent yet', async () => {
      const app = createDatabaseApp({ logger: false, store: pagedStore(5, 0) });
      const res = await app.inject({ method: 'GET', url: '/api/users' });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toEqual({ error: 'Database unavailable; try again later' });
      await app.close();
    });

    it('answers HEAD without reading past the first batch', async () => {
      const pages: number[] = [];
      const store = pagedStore(1000);
      const page = store.page;
      store.page = (after, limit) => {
        pages.push(after);
        return page(after, limit);
      };
      const app = createDatabaseApp({ logger: false, store });
      const res = await app.inject({ method: 'HEAD', url: '/api/users' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(pages).toEqual([0]);
      await app.close();
    });
  });
});

copierHookContract(() => createDatabaseApp({ logger: false, store: fakeStore({}) }));
openApiContract('database', () => createDatabaseApp({ logger: false, store: fakeStore({}) }));
