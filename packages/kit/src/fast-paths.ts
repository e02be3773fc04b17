/**
 * The speed tricks of the kit, in one place. Each was measured with `npm run bench` (bench/README.md)
 * and each reaches into how Fastify or pino work inside, so a minor release could silently undo
 * it: packages/kit/test/fast-paths.test.ts fails when one stops working.
 *
 * 1. No child logger per request (withoutRequestChildren).
 * 2. CORS and shutdown's `Connection: close` where the response head is written, not in hooks
 *    (responseClass).
 * 3. JSON.stringify for a response whose numbers change on every request (stringifyWithJson).
 * 4. Never awaiting a Fastify instance (a thenable): see ServiceDefinition.build in run.ts.
 */
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import type { Bindings, ChildLoggerOptions } from 'pino';
import { addAllowOrigin } from './cors.js';
import type { Logger } from './logger.js';

/**
 * 1. Fastify gives each request a child logger that binds its id, which ties the request's lines
 * together. Without request logging a request writes at most one line (an error, which names method
 * and URL), so here those children are the service's logger itself and no request pays for one
 * (pino's child and its bindings' serialization showed in profiles). Fastify's own child factory
 * is kept: a custom one is re-validated on every request. Fastify wraps the logger it is given in a
 * child of its own, so children of children must keep the behaviour too.
 */
export function withoutRequestChildren(logger: Logger): Logger {
  const child = (bindings: Bindings, childOptions?: ChildLoggerOptions): Logger =>
    bindings.reqId !== undefined ? shared : withoutRequestChildren(logger.child(bindings, childOptions));
  // Inherits everything else (level, streams, bindings) from the logger, as pino's own children do.
  const shared = Object.create(logger, { child: { value: child } }) as Logger;
  return shared;
}

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];

/**
 * 2. A response class that adds `Access-Control-Allow-Origin: *` (when cors) and, once the server is
 * closing, ends the connection after the response, both where the head is written. As hooks they
 * cost every request a hook run (@fastify/cors: about 8% of variant A's throughput). inject()
 * writes through its own response class, so tests check these over a socket.
 */
export function responseClass(cors: boolean, closing: () => boolean): typeof ServerResponse {
  return class Response<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
    // One signature for both forms of the base method: (status, message?, headers?) and (status, headers?).
    override writeHead(statusCode: number, messageOrHeaders?: string | Headers, headers?: Headers): this {
      if (closing()) this.shouldKeepAlive = false;
      if (cors) addAllowOrigin(this, typeof messageOrHeaders === 'string' ? headers : messageOrHeaders);
      return super.writeHead(statusCode, messageOrHeaders as string, headers);
    }
  };
}

/**
 * 3. A route serializer for answers with a number that is new on every request (variant A's
 * uptime). fast-json-stringify writes numbers as `'' + n`, and V8 keeps such strings in its
 * number-to-string cache, so each request promoted one string to the old generation (old space grew
 * under load, RSS +10 MB); JSON.stringify does not. The route keeps its schema for types and docs.
 */
export const stringifyWithJson = (): ((data: unknown) => string) => JSON.stringify;
