import corsPlugin from '@fastify/cors';
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import FindMyWay, { type HTTPMethod } from 'find-my-way';
import { Type } from 'typebox';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { answerOptions, pathOf } from './cors.js';
import { HttpError } from './errors.js';
import type { Logger } from './logger.js';
import { attachMetrics, metricsContentType, metricsText, type AppMetrics } from './metrics.js';
import { addDocumentRoute, addOpenApi, type ApiDescription } from './openapi.js';
import { closeQuietConnectionsOnClose } from './idle-connections.js';
import { DEFAULT_MAX_EVENT_LOOP_DELAY_MS, shedLoad } from './load-shedding.js';
import { assignRequestId, requestIdHeader, requestIdOf } from './request-id.js';

/** A Fastify instance whose route schemas (TypeBox) type the handlers' requests and answers. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface ServerOptions {
  /** A pino logger, or false for none (unit tests). */
  logger: Logger | false;
  /** Largest request body accepted, in bytes; default 1 MiB. */
  bodyLimit?: number;
  /** CORS for every origin; default true. A transparent proxy turns it off and leaves CORS to its upstream. */
  cors?: boolean;
  /** Title and description of the OpenAPI document. */
  api: ApiDescription;
  /**
   * Serve GET /openapi.json and the /docs page; default true. A transparent proxy turns it off:
   * those paths belong to its upstream.
   */
  serveApiDocument?: boolean;
  /**
   * Count the requests and have metrics at all; default true. False: no request is counted, there
   * is no GET /metrics (404 as any unknown path), and metricsOf (so serveMetricsOnPort, a store's metrics)
   * throws. For an app whose operator does not scrape it: each request then costs a little less.
   */
  metrics?: boolean;
  /**
   * Serve GET /metrics (Prometheus text); default true when the app has metrics. A transparent
   * proxy turns it off and serves them on a port of its own (serveMetricsOnPort): its port's paths
   * belong to its upstream.
   */
  serveMetrics?: boolean;
  /**
   * Event loop lag, in ms, above which requests are answered 503 (load-shedding.ts); default 1,000.
   * 0 turns shedding off, for an app whose paths all belong to another (a transparent proxy).
   */
  maxEventLoopDelayMs?: number;
}

const MiB = 1024 * 1024;

const metricsSchema = {
  summary: 'Metrics in the Prometheus text format: requests by route template and status, in flight, process, event loop',
  tags: ['metrics'],
  response: {
    200: {
      description: 'Prometheus text format 0.0.4; this route is not counted in the request metrics',
      content: { 'text/plain': { schema: Type.String() } },
    },
  },
};

/** GET /metrics; the scrape itself is left out of what it reports. */
function addMetricsRoute(app: App, metrics: AppMetrics): void {
  app.get('/metrics', { schema: metricsSchema }, (_request, reply) => {
    metricsText(metrics).then(
      (text) => sendUnchecked(reply.type(metricsContentType), text), // text, as its content type says
      (error: unknown) => sendUnchecked(reply, error), // an error goes to the error handler: 500
    );
  });
}

/** A reply as a route with any schema has it, for the few bodies its schema cannot type. */
interface AnyReply {
  send(payload: unknown): unknown;
}

/**
 * Sends a body the route's schema cannot type: JSON text already serialized (a static list, a
 * forwarded answer) or a file stream. The caller says, where the body is made, why it matches.
 */
export function sendUnchecked(reply: AnyReply, body: unknown): void {
  void reply.send(body);
}

/** Messages for Fastify's own 4xx errors, which otherwise leak parser wording. */
const frameworkMessages: Record<string, string> = {
  FST_ERR_CTP_INVALID_JSON_BODY: 'Request body is not valid JSON',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'Request body is empty but content-type is application/json',
  FST_ERR_CTP_BODY_TOO_LARGE: 'Request body is too large',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'Unsupported content type: send application/json',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'Request body does not match its content-length',
};

const jsonType = 'application/json; charset=utf-8';

/** A 503 says the service may answer soon (a database unreachable for a moment): when to ask again. */
const retryAfter = (status: number): Record<string, string> => (status === 503 ? { 'retry-after': '1' } : {});

function sendError(reply: FastifyReply, status: number, message: string): FastifyReply {
  return reply.code(status).headers(retryAfter(status)).type(jsonType).send({ error: message });
}

/**
 * What an error is answered with, one decision for Fastify's error handler and answerError: an
 * HttpError gives its own status and message (a 5xx one logged as a warning); another error with a 4xx
 * status (Fastify's: a failed validation, a body over the limit, malformed JSON) gives it in words of
 * ours; anything else is a 5xx logged with its stack, the client reading no internals. `fields` go into
 * the log line (the request's id, where the logger does not bind it).
 */
function answerFor(
  error: unknown,
  log: FastifyBaseLogger,
  request: { method?: string | undefined; url?: string | undefined },
  fields?: Record<string, unknown>,
): { status: number; message: string } {
  if (error instanceof HttpError) {
    if (error.statusCode >= 500) log.warn({ ...fields, err: error }, error.message);
    return { status: error.statusCode, message: error.message };
  }
  const { statusCode = 500, validation, code = '', message } = error as Partial<FastifyError>;
  if (statusCode >= 400 && statusCode < 500) {
    return validation
      ? { status: 400, message: `Invalid request: ${message}` }
      : { status: statusCode, message: frameworkMessages[code] ?? message ?? '' };
  }
  log.error({ ...fields, err: error, method: request.method, url: request.url }, 'request failed');
  return { status: statusCode >= 500 && statusCode < 600 ? statusCode : 500, message: 'Internal server error' };
}

/**
 * The error handler's answer for a handler that writes Node's response itself (wrapRequests, a
 * hijacked reply), as JSON; its log line has the request's id, as the answer does.
 */
export function answerError(response: ServerResponse, error: unknown, log: FastifyBaseLogger): void {
  const { status, message } = answerFor(error, log, response.req, { reqId: requestIdOf(response.req) });
  const body = JSON.stringify({ error: message });
  const id = requestIdOf(response.req);
  response.writeHead(status, {
    'content-type': jsonType,
    'content-length': Buffer.byteLength(body),
    ...retryAfter(status),
    ...(id !== undefined && { [requestIdHeader]: id }),
  });
  response.end(body);
}

/**
 * A body over the limit whose declared rest is at most 16 times the limit is read to its end and
 * dropped, and its connection kept: Fastify closes it, and a client still sending then got a reset
 * instead of its 413. The kit's requestTimeout bounds how long that reading may take.
 */
function drainTooLargeBody(request: FastifyRequest, reply: FastifyReply, bodyLimit: number): void {
  const declared = Number(request.headers['content-length']);
  if (!(declared <= 16 * bodyLimit)) return;
  reply.removeHeader('connection');
  request.raw.resume();
}

/** Node's parser errors, as the status a client reads; anything else is a 400. */
const clientErrorStatus: Record<string, number> = {
  HPE_HEADER_OVERFLOW: 431,
  ERR_HTTP_REQUEST_TIMEOUT: 408,
  ERR_HTTP_HEADERS_TIMEOUT: 408,
};
const clientErrorMessage: Record<number, string> = {
  400: 'Bad request: the request could not be parsed',
  408: 'Request timeout: the request was not received in time',
  431: 'Request header fields too large',
};

/**
 * Fastify's clientErrorHandler: a request Node could not parse gets the services' JSON error with
 * an X-Request-Id of its own, and the connection is closed (its framing is lost).
 */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const status = clientErrorStatus[error.code ?? ''] ?? 400;
  const body = JSON.stringify({ error: clientErrorMessage[status] });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${jsonType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `${requestIdHeader}: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * A Fastify instance with what every service shares: CORS for every origin (cors.ts), JSON bodies,
 * every error answered as JSON `{"error": "..."}` (404, 405 with Allow, 400, 413, 415, 500
 * without internals), timeouts that keep slow or idle sockets from piling up, and
 * connection draining on close, a 503 while the event loop lags (load-shedding.ts), an OpenAPI document of every route, GET /metrics (metrics.ts; unless
 * `metrics: false`), and
 * an X-Request-Id on every request and answer (request-id.ts). Services add their routes as
 * plugins (app.register), which load after the document's collector; nothing listens here.
 */
export function createServer(options: ServerOptions): App {
  let closing = false;
  const cors = options.cors !== false;

  const requestLogging = options.logger !== false && options.logger.isLevelEnabled('debug');
  const bodyLimit = options.bodyLimit ?? MiB;
  const app = Fastify({
    http: {
      // Node enforces headersTimeout and requestTimeout only when it looks, every 30 s by default:
      // a head unfinished after 10 s would hold its connection up to 40 s.
      connectionsCheckingInterval: 1000,
    },
    // A client has 10 s to send its headers (set below) and 30 s for the whole request; an idle
    // keep-alive socket is closed after 72 s, longer than a proxy's 60 s upstream idle timeout so
    // that the proxy, not us, closes first and never reuses a closing socket.
    requestTimeout: 30_000,
    keepAliveTimeout: 72_000,
    ...(options.logger === false ? { logger: false } : { loggerInstance: options.logger }),
    bodyLimit,
    // The request's id is its X-Request-Id when well formed (request-id.ts), else a new UUID: the
    // reqId of its log lines, and the X-Request-Id of its answer (the onSend hook below).
    genReqId: assignRequestId,
    requestIdHeader: false,
    // Per-request lines cost a write each; they are on only at LOG_LEVEL=debug or trace.
    logController: new LogController({ disableRequestLogging: !requestLogging }),
    forceCloseConnections: 'idle',
    return503OnClosing: true,
    // Malformed URLs and header errors reach the client as JSON too.
    frameworkErrors: (error, _request, reply) => sendError(reply, 400, error.message),
    // Requests Node refuses before Fastify sees them (a malformed head, one too large) as JSON too.
    clientErrorHandler: answerClientError,
  }).withTypeProvider<TypeBoxTypeProvider>() as unknown as App; // Fastify infers the logger type from the options; every service uses the base logger type
  app.server.headersTimeout = 10_000;
  // An Expect other than 100-continue is served like any request, as nginx does (RFC 9110 lets a
  // server ignore it); without a listener Node would answer 417 with an empty body before routing.
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => app.routing(request, response));
  const metrics = options.metrics === false ? undefined : attachMetrics(app);
  closeQuietConnectionsOnClose(app);
  const maxEventLoopDelayMs = options.maxEventLoopDelayMs ?? DEFAULT_MAX_EVENT_LOOP_DELAY_MS;
  if (maxEventLoopDelayMs > 0) shedLoad(app, maxEventLoopDelayMs);

  app.addHook('onSend', (request, reply, _payload, done) => {
    void reply.header(requestIdHeader, request.id);
    // A client kept alive goes elsewhere for its next request once we are closing.
    if (closing) void reply.header('connection', 'close');
    done();
  });

  // A second router that only knows which methods exist on which paths, so that a known
  // path with a wrong method answers 405 with Allow instead of 404.
  // Hand-written: Fastify answers 404 there, and no well-kept plugin answers 405 with Allow.
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

  // Before any route: the document and the kit's error answers are collected as routes are added.
  addOpenApi(app, options.api);
  // Access-Control-Allow-Origin on every answer. Its OPTIONS route hands every OPTIONS to the
  // not-found handler below, which knows each path's methods (preflight: false).
  if (cors) void app.register(corsPlugin, { origin: '*', preflight: false, hideOptionsRoute: false });
  void app.register(async (kitRoutes: App) => {
    if (metrics !== undefined && options.serveMetrics !== false) addMetricsRoute(kitRoutes, metrics);
    if (options.serveApiDocument === false) return;
    addDocumentRoute(kitRoutes);
    // An optional peer, imported only here: the services that serve /docs list it, the proxy does not.
    // Its page has no inline script; Swagger UI styles some elements inline.
    await kitRoutes.register(import('@fastify/swagger-ui'), {
      routePrefix: '/docs',
      staticCSP: "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'",
    });
  });

  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });

  /** A request no route takes: 405 with Allow on a path that takes other methods, 404 elsewhere. */
  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = pathOf(request.url);
    const allowed = allowedMethods(path);
    if (allowed.length > 0 && request.method === 'OPTIONS' && cors) return answerOptions(request, reply, allowed);
    if (allowed.length > 0) {
      void reply.header('allow', allowed.join(', '));
      return sendError(reply, 405, `Method ${request.method} is not allowed on ${path}`);
    }
    return sendError(reply, 404, `Not found: ${request.method} ${path}`);
  };
  app.setNotFoundHandler(answerUnrouted);

  app.setErrorHandler((error: FastifyError, request, reply) => {
    // Fastify refuses a QUERY without a Content-Type before any route is looked up; no route takes
    // QUERY here, so it gets the answer of every other method a path does not take.
    if (error.code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE') return answerUnrouted(request, reply);
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') drainTooLargeBody(request, reply, bodyLimit);
    const { status, message } = answerFor(error, request.log, request);
    return sendError(reply, status, message);
  });

  return app;
}
