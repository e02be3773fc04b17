/**
 * CORS for every origin, as the original apps allowed it: every answer carries
 * `Access-Control-Allow-Origin: *`, and a preflight is answered 204 with the methods the
 * path takes and the request headers the browser asked for.
 *
 * Written here rather than taken from @fastify/cors: for this fixed policy that plugin runs
 * a hook and copies its options on every request, a cost `npm run bench` shows on variant A. Here the header is added where the response head is
 * written, at no cost per request, and it is on every answer, errors included. (inject()
 * writes through its own response class, so tests check the header over a socket.)
 */
import type { ServerResponse } from 'node:http';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { indexOfName, isFlatList, type Head } from './flat-head.js';

const allowOrigin = 'access-control-allow-origin';

/** Adds the header to a response whose head is about to be written with `headers`. */
export function addAllowOrigin(response: ServerResponse, headers: Head | undefined): void {
  if (isFlatList(headers)) {
    if (indexOfName(headers, allowOrigin) < 0 && !response.hasHeader(allowOrigin)) headers.push(allowOrigin, '*');
  } else if (headers === undefined || Array.isArray(headers)) {
    if (!response.hasHeader(allowOrigin)) response.setHeader(allowOrigin, '*');
  } else {
    headers[allowOrigin] ??= '*';
  }
}

/** The path of a request target, without its query. */
export const pathOf = (url: string): string => url.split('?', 1)[0] ?? '/';

/**
 * Answers OPTIONS on a path that exists: 204 with Allow (the path's methods, OPTIONS included), and for a preflight (it names
 * Access-Control-Request-Method) the CORS grants as well. Unknown paths get the 404.
 */
export function answerOptions(allowedMethods: (path: string) => string[]) {
  return (request: FastifyRequest, reply: FastifyReply): void => {
    const allowed = allowedMethods(pathOf(request.url));
    if (allowed.length === 0) return reply.callNotFound();
    const methods = allowed.join(', ');
    void reply.code(204).header('allow', methods);
    if (request.headers['access-control-request-method'] !== undefined) {
      const askedHeaders = request.headers['access-control-request-headers'];
      void reply.header('access-control-allow-methods', methods).header('vary', 'Access-Control-Request-Headers');
      if (askedHeaders !== undefined) void reply.header('access-control-allow-headers', askedHeaders);
    }
    // Some browsers wait for a body on a 204 without a length.
    void reply.header('content-length', '0').send();
  };
}
