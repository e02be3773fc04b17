/**
 * OPTIONS as the original apps' CORS (every origin) answers it: 204 with the methods the path takes,
 * and for a preflight the request headers the browser asked for. `Access-Control-Allow-Origin: *`
 * on every answer is @fastify/cors's (server.ts); its own preflight, which grants one fixed list of
 * methods on any path, is off, and its OPTIONS route hands the request to the kit's not-found handler,
 * which knows each path's methods and answers here.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';

/** The path of a request target, without its query. */
export const pathOf = (url: string): string => url.split('?', 1)[0] ?? '/';

/**
 * Answers OPTIONS on a path that exists: 204 with Allow (the path's methods, OPTIONS included), and
 * for a preflight (it names Access-Control-Request-Method) the CORS grants as well.
 */
export function answerOptions(request: FastifyRequest, reply: FastifyReply, allowed: string[]): FastifyReply {
  const methods = allowed.join(', ');
  void reply.code(204).header('allow', methods);
  if (request.headers['access-control-request-method'] !== undefined) {
    const askedHeaders = request.headers['access-control-request-headers'];
    void reply.header('access-control-allow-methods', methods).header('vary', 'Access-Control-Request-Headers');
    if (askedHeaders !== undefined) void reply.header('access-control-allow-headers', askedHeaders);
  }
  // Some browsers wait for a body on a 204 without a length.
  return reply.header('content-length', '0').send();
}
