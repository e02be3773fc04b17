import Fastify, { LogController, type FastifyError, type FastifyInstance, type FastifyReply } from 'fastify';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { ServerResponse, type IncomingMessage, type OutgoingHttpHeader, type OutgoingHttpHeaders } from 'node:http';
import { addAllowOrigin, answerOptions, pathOf } from './cors.js';
import { HttpError } from './errors.js';
import type { Bindings, ChildLoggerOptions } from 'pino';
import type { Logger } from './logger.js';

export interface ServerOptions {
  /** A pino logger, or false for none (unit tests). */
  logger: Logger | false;
  /** Largest request body accepted, in bytes; default 1 MiB. */
  bodyLimit?: number;
  /** Most simultaneous client connections; extra ones are refused by the socket layer. */
  maxConnections?: number;
  /** CORS for every origin; default true. A transparent proxy turns it off and leaves CORS to its upstream. */
  cors?: boolean;
}

const MiB = 1024 * 1024;

type Headers = OutgoingHttpHeaders | OutgoingHttpHeader[];

/** Messages for Fastify's own 4xx errors, which otherwise leak parser wording. */
const frameworkMessages: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'Request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Request body is empty but content-type is application/json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported content type: send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Request body does not match its content-length',
};

function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).type('application/json; charset=utf-8').send({ error: message });
}

/**
 * Fastify gives each request a child logger that binds its id, which ties the request's lines
 * together. Without request logging a request writes at most one line (an error, which names
 * method and URL), so here those children are the service's logger itself and no request pays
 * for one. Fastify's own child factory is kept: a custom one is re-validated on every request.
 */
function withoutRequestChildren(logger: Logger): Logger {
  // Other children (Fastify's own, which adds its serializers, or a service's) are real ones,
  // and so are theirs except per request.
  const child = (bindings: Bindings, childOptions?: ChildLoggerOptions): Logger =>
    bindings.reqId !== undefined ? shared : withoutRequestChildren(logger.child(bindings, childOptions));
  // Inherits everything else (level, streams, bindings) from the logger, as pino's own children do.
  const shared = Object.create(logger, { child: { value: child } }) as Logger;
  return shared;
}

/**
 * A Fastify instance with what every service shares: CORS for every origin (cors.ts), JSON bodies,
 * every error answered as JSON `{"error": "..."}` (404, 405 with Allow, 400, 413, 415, 500
 * without internals), timeouts that keep slow or idle sockets from piling up, and
 * connection draining on close. Routes are added by the caller; nothing listens here.
 */
export function createServer(options: ServerOptions): FastifyInstance {
  // Done where a response's head is written rather than in hooks, which would cost every
  // request a hook run: the CORS header, and during shutdown, closing the connection of a
  // request already in flight, so that a keep-alive client does not hold the server open.
  let closing = false;
  const cors = options.cors !== false;
  class Response<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
    // One signature for both forms of the base method: (status, message?, headers?) and (status, headers?).
    override writeHead(statusCode: number, messageOrHeaders?: string | Headers, headers?: Headers): this {
      if (closing) this.shouldKeepAlive = false;
      if (cors) addAllowOrigin(this, typeof messageOrHeaders === 'string' ? headers : messageOrHeaders);
      return super.writeHead(statusCode, messageOrHeaders as string, headers);
    }
  }

  const requestLogging = options.logger !== false && options.logger.isLevelEnabled('debug');
  const app = Fastify({
    http: { ServerResponse: Response },
    ...(options.logger === false
      ? { logger: false }
      : { loggerInstance: requestLogging ? options.logger : withoutRequestChildren(options.logger) }),
    bodyLimit: options.bodyLimit ?? MiB,
    // Per-request lines cost a write each; they are on only at LOG_LEVEL=debug or trace.
    logController: new LogController({ disableRequestLogging: !requestLogging }),
    // A client has 10 s to send its headers and 30 s for the whole request; an idle
    // keep-alive socket is closed after 72 s, longer than a proxy's 60 s upstream idle
    // timeout so that the proxy, not us, closes first and never reuses a closing socket.
    connectionTimeout: 0,
    requestTimeout: 30_000,
    keepAliveTimeout: 72_000,
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Malformed URLs and header errors reach the client as JSON too.
    frameworkErrors: (error, _request, reply) => sendError(reply, 400, error.message),
  }) as unknown as FastifyInstance; // the logger generic differs; every consumer uses the base logger type
  app.server.headersTimeout = 10_000;
  if (options.maxConnections !== undefined) app.server.maxConnections = options.maxConnections;

  // A second router that only knows which methods exist on which paths, so that a known
  // path with a wrong method answers 405 with Allow instead of 404.
  const methodsByPath = FindMyWay();
  app.addHook('onRoute', (route) => {
    if (route.url.includes('*')) return; // catch-all routes (OPTIONS) say nothing
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    for (const method of methods) {
      if (!methodsByPath.find(method as HTTPMethod, route.url)) methodsByPath.on(method as HTTPMethod, route.url, () => undefined);
    }
  });

  /** The methods a path takes, OPTIONS included when this server answers it; none for an unknown path. */
  const allowedMethods = (path: string): string[] => {
    const routed = (['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const).filter((m) => methodsByPath.find(m, path));
    return routed.length > 0 && cors ? [...routed, 'OPTIONS'] : routed;
  };

  // JSON is the only body format any service accepts; anything else is a clear 415.
  app.removeContentTypeParser('text/plain');
  if (cors) app.options('*', answerOptions(allowedMethods));

  app.addHook('preClose', async () => {
    closing = true;
  });

  app.setNotFoundHandler((request, reply) => {
    const path = pathOf(request.url);
    const allowed = allowedMethods(path);
    if (allowed.length > 0) {
      void reply.header('allow', allowed.join(', '));
      return sendError(reply, 405, `Method ${request.method} is not allowed on ${path}`);
    }
    return sendError(reply, 404, `Not found: ${request.method} ${path}`);
  });

  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status = error.statusCode !== undefined && error.statusCode >= 400 && error.statusCode < 600 ? error.statusCode : 500;
    if (error instanceof HttpError) {
      if (status >= 500) request.log.warn({ err: error }, error.message);
      return sendError(reply, status, error.message);
    }
    if (status >= 500) {
      request.log.error({ err: error, method: request.method, url: request.url }, 'request failed');
      return sendError(reply, status, 'Internal server error');
    }
    if (error.validation) return sendError(reply, 400, `Invalid request: ${error.message}`);
    return sendError(reply, status, frameworkMessages[error.code] ?? error.message);
  });

  return app;
}
