/**
 * The first change a copier makes: an `onRequest` hook (here, a bearer-token check) on a service's
 * app. It must hold for every documented route over a real socket exactly as through inject(),
 * which is what a request that skipped Fastify's routing and hooks would break.
 */
// Types GET /openapi.json's source, app.swagger(), on every app the kit makes.
import type {} from '@fastify/swagger';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send } from '../http-request.js';

const token = 'Bearer copier';

/** Adds the hook: 401 `{"error"}` unless the request carries the token. */
function addBearerCheck(app: FastifyInstance): void {
  app.addHook('onRequest', async (request, reply) => {
    if (request.headers.authorization !== token) await reply.code(401).send({ error: 'Unauthorized' });
  });
}

interface DocumentedRoute {
  method: string;
  path: string;
}

/**
 * Every method and path of the app's OpenAPI document, its `{parameters}` filled with `1`. OPTIONS
 * is left out: @fastify/cors answers preflights before other hooks, as a browser sends them without credentials.
 */
function documentedRoutes(document: { paths?: Record<string, object | undefined> }): DocumentedRoute[] {
  return Object.entries(document.paths ?? {}).flatMap(([template, operations]) =>
    Object.keys(operations ?? {})
      .filter((key) => key !== 'parameters' && key !== 'options')
      .map((method) => ({ method: method.toUpperCase(), path: template.replace(/\{[^}]+\}/g, '1') })),
  );
}

/** What one request gets through inject() and over the socket at `base`, with and without the token. */
async function statusesOf(app: FastifyInstance, base: string, route: DocumentedRoute): Promise<Record<string, number>> {
  const body = ['POST', 'PUT', 'PATCH'].includes(route.method) ? '{}' : undefined;
  const headers = (authorized: boolean): Record<string, string> => ({
    ...(authorized && { authorization: token }),
    ...(body !== undefined && { 'content-type': 'application/json' }),
  });
  const injected = (authorized: boolean): Promise<number> =>
    app
      .inject({
        method: route.method as 'GET',
        url: route.path,
        headers: headers(authorized),
        ...(body !== undefined && { payload: body }),
      })
      .then((res) => res.statusCode);
  const overSocket = (authorized: boolean): Promise<number> =>
    send(base, {
      method: route.method,
      path: route.path,
      headers: headers(authorized),
      ...(body !== undefined && { body: Buffer.from(body) }),
    }).then((res) => res.status);
  return {
    injectWithout: await injected(false),
    socketWithout: await overSocket(false),
    injectWith: await injected(true),
    socketWith: await overSocket(true),
  };
}

/**
 * The app that `makeApp` builds, with the check added, answers 401 without the token and its route's
 * own answer with it, over a socket exactly as through inject(), on every route its document lists.
 */
export function copierHookContract(makeApp: () => FastifyInstance): void {
  describe("a copier's onRequest hook holds on every documented route, over a socket as through inject()", () => {
    const app = makeApp();
    addBearerCheck(app);
    let base = '';
    beforeAll(async () => {
      base = await app.listen({ port: 0, host: '127.0.0.1' });
    });
    afterAll(() => app.close());

    it('401 without the token, the route itself with it', async () => {
      const routes = documentedRoutes(app.swagger());
      expect(routes.length).toBeGreaterThan(3);
      for (const route of routes) {
        const statuses = await statusesOf(app, base, route);
        const name = `${route.method} ${route.path}`;
        expect(statuses, name).toMatchObject({ injectWithout: 401, socketWithout: 401 });
        expect(statuses.socketWith, name).toBe(statuses.injectWith);
        expect(statuses.socketWith, name).not.toBe(401);
      }
    });
  });
}
