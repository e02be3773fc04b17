/**
 * An OpenAPI 3.1 document per service, from the same TypeBox schemas that type and serialize the
 * routes (@fastify/swagger). The kit adds to every route the errors the kit itself answers, so the
 * document lists every status a route can answer without each service repeating them.
 */
import swagger from '@fastify/swagger';
import type { FastifySchema, RouteOptions } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { errorAnswer as error } from './schemas.js';
import { sendUnchecked, type App } from './server.js';

export interface ApiDescription {
  /** The document's title, e.g. the service's name. */
  title: string;
  /** What the service does. */
  description: string;
}

/** Answers the kit may give on any route, and on routes that take a body. */
const everyRoute = {
  400: error('Malformed request (URL, headers) or invalid parameters'),
  500: error('Unexpected failure; the details are in the log, not here'),
  503: error('The service is shutting down, overloaded, or a dependency is down; try again (Retry-After)'),
  default: error('Any other path or method: 404 unknown path, 405 wrong method (with Allow)'),
};
const withBody = {
  413: error('Request body over the limit (1 MiB)'),
  415: error('Content type other than application/json'),
};

/** @fastify/cors's OPTIONS route (cors.ts), which answers every preflight. */
const optionsSchema = {
  summary: 'CORS preflight, on any path: the methods and headers granted',
  tags: ['cors'],
  response: { 204: Type.Null({ description: 'No body; Access-Control-Allow-Methods and -Headers' }) },
};

type Schema = NonNullable<RouteOptions['schema']>;

/**
 * The route's schema as documented: its own answers plus the kit's errors. Only the document gets
 * them: in the route's own schema, `default` would also serialize its successful answers.
 */
function withKitErrors({ schema: routeSchema = {}, url, route }: { schema?: Schema; url: string; route: RouteOptions }): {
  schema: Schema;
  url: string;
} {
  const schema = route.method === 'OPTIONS' && url === '*' ? optionsSchema : routeSchema;
  const methods = [route.method].flat();
  const takesBody = methods.some((m) => m === 'POST' || m === 'PUT' || m === 'PATCH');
  const response = { ...everyRoute, ...(takesBody ? withBody : {}), ...(schema.response as object | undefined) };
  // A catch-all (`*`, `/*`) as an OpenAPI path: paths start with `/`, and `*` is no template.
  if (!url.endsWith('*')) return { schema: { ...schema, response }, url };
  return { schema: { ...schema, response, params: anyPath }, url: `${url.slice(0, -1).replace(/\/?$/, '/')}{path}` };
}

const anyPath = Type.Object({ path: Type.String({ description: 'Any path' }) });

/** A route schema that keeps the route out of the document (e.g. methods OpenAPI cannot name). */
export const notInDocument: FastifySchema = { hide: true };

/** Registers @fastify/swagger, which learns routes as they are added: services add theirs after it. */
export function addOpenApi(app: App, api: ApiDescription): void {
  void app.register(swagger, {
    transform: withKitErrors,
    openapi: { openapi: '3.1.0', info: { title: api.title, description: api.description, version: '1.0.0' } },
  });
}

/** GET /openapi.json, the document built once on the first request, when every route exists; and the /docs page. */
export const apiDocs = fp(async (app: App) => {
  let document: string | undefined;
  const schema = {
    summary: 'This document (OpenAPI 3.1)',
    tags: ['docs'],
    response: { 200: Type.Object({}, { additionalProperties: true }) },
  };
  app.get('/openapi.json', { schema }, (_request, reply) => {
    document ??= JSON.stringify(app.swagger());
    sendUnchecked(reply.type('application/json; charset=utf-8'), document); // JSON text of the document object
  });
  // An optional peer, imported only here: the services that serve /docs list it, the proxy does not.
  // Its page has no inline script; Swagger UI styles some elements inline.
  await app.register(import('@fastify/swagger-ui'), {
    routePrefix: '/docs',
    staticCSP: "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
  });
});
