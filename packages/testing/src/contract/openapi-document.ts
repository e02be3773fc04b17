/**
 * A service's OpenAPI document: valid OpenAPI 3.1, titled with the service's name, and every route the app
 * registers is in it (but the /docs page's own), with the kit's errors. Each service's tests call it with their
 * own app, so the check needs no list of services; test/consistency/service-tests.test.ts checks every service does.
 * The contract suites check real answers against the same documents (documented.ts).
 */
// Types app.swagger(), the document's source, on every app the kit makes.
import type {} from '@fastify/swagger';
import { Validator } from '@seriousme/openapi-schema-validator';
import type { FastifyInstance } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';

interface Operation {
  responses: Record<string, unknown>;
}
interface Document {
  openapi: string;
  info: { title: string };
  paths: Record<string, Record<string, Operation>>;
}

/** The /docs page's routes, which @fastify/swagger-ui adds and hides from the document it shows. */
const isSwaggerUi = (url: string): boolean => url === '/docs' || url.startsWith('/docs/');

const openApiMethods = new Set(['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE']);

/** A Fastify path as an OpenAPI path: `:id` -> `{id}`, a trailing `*` -> `{path}`. */
const templated = (url: string): string => url.replace(/:(\w+)/g, '{$1}').replace(/\/?\*$/, '/{path}');

/**
 * Every (method, path) the app routes, read back from its router's printout (`├── /path (GET, HEAD)`,
 * children indented by four characters and printed relative to their parent), so that a route the
 * document missed, however it was added, is found.
 */
function routesOf(app: FastifyInstance): { method: string; url: string }[] {
  const routes: { method: string; url: string }[] = [];
  const stack: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const match = /^([│ ]*)[├└]── (.*?)(?: \(([^)]+)\))?$/.exec(line);
    if (match === null) continue;
    const depth = (match[1] ?? '').length / 4;
    stack.length = depth;
    stack.push(match[2] ?? '');
    const url = stack.join('').replace(/^\/?/, '/').replace(/\/\/+/g, '/');
    for (const method of match[3]?.split(', ') ?? []) routes.push({ method, url });
  }
  return routes;
}

/** Checks the document of the app `makeApp` builds for the service `name` (its folder under services/). */
export function openApiContract(name: string, makeApp: () => FastifyInstance): void {
  describe(`the OpenAPI document of ${name}`, () => {
    const app = makeApp();
    const hidden = new Set<string>();
    app.addHook('onRoute', (route) => {
      if (isSwaggerUi(route.url)) return;
      if ((route.schema as { hide?: boolean } | undefined)?.hide === true) for (const method of [route.method].flat()) hidden.add(method);
    });
    let document: Document;
    afterAll(() => app.close());

    it('is valid OpenAPI 3.1, titled with the service name', async () => {
      await app.ready();
      document = app.swagger() as unknown as Document;
      expect(document.openapi).toBe('3.1.0');
      expect(document.info.title).toBe(name);
      const result = await new Validator().validate(document as unknown as Parameters<Validator['validate']>[0]);
      expect(result.errors ?? []).toEqual([]);
      expect(result.valid).toBe(true);
    });

    it('documents every route the app registers, with the kit errors', () => {
      const routes = routesOf(app);
      expect(routes.map((r) => `${r.method} ${r.url}`)).toContain('GET /health'.replace('/health', name === 'proxy' ? '/*' : '/health'));
      const documented = routes.filter((r) => openApiMethods.has(r.method) && !isSwaggerUi(r.url));
      for (const { method, url } of documented) {
        const operation = document.paths[templated(url)]?.[method.toLowerCase()];
        expect(operation, `${method} ${url}`).toBeDefined();
        expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(['400', '500', '503', 'default']));
      }
      // Hidden routes are only for methods OpenAPI cannot name (the proxy forwards them too).
      for (const method of hidden) expect(openApiMethods.has(method) || method === 'HEAD', method).toBe(false);
    });
  });
}
