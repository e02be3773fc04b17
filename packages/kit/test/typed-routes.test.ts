/**
 * Route schemas type the handlers: a handler that answers the wrong shape does not compile. The
 * `@ts-expect-error` lines are checked by `npm run lint` (tsc over the tests): were the type
 * provider lost, they would no longer be errors and the type check would fail.
 */
import { describe, expect, it } from 'vitest';
import { Type } from 'typebox';
import { createServer } from '../src/server.js';

const Greeting = Type.Object({ message: Type.String() });

describe('typed routes', () => {
  it('types answers and requests from the route schema', async () => {
    const app = createServer({ logger: false, api: { title: 'test', description: 'typed routes' } });
    app.get('/ok', { schema: { response: { 200: Greeting } } }, () => ({ message: 'hello' }));
    // @ts-expect-error -- a number where the schema says string
    app.get('/wrong', { schema: { response: { 200: Greeting } } }, () => ({ message: 42 }));
    app.get('/sent', { schema: { response: { 200: Greeting } } }, (_request, reply) => {
      // @ts-expect-error -- a field the schema does not have, and the required one missing
      void reply.send({ greeting: 'hello' });
    });
    app.get('/query', { schema: { querystring: Type.Object({ limit: Type.Integer() }) } }, (request) => {
      const limit: number = request.query.limit;
      return { limit };
    });
    expect((await app.inject({ method: 'GET', url: '/ok' })).json()).toEqual({ message: 'hello' });
    await app.close();
  });
});
