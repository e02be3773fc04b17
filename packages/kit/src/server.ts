import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyError,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
  type FastifyServerOptions,
  type RawServerDefault,
} from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type ServerResponse } from 'node:http';
import type { Http2SecureServer } from 'node:http2';
import type { Socket } from 'node:net';
import { learnAllowedMethods } from './allowed-methods.js';
import { HttpError } from './errors.js';
import type { Logger } from './logger.js';
import { addOpenApi, type ApiDescription } from './openapi.js';
import { closeQuietConnectionsOnClose } from './idle-connections.js';
import { assignRequestId, requestIdHeader } from './request-id.js';

/** A Fastify instance whose route schemas (TypeBox) type the handlers' requests and answers. */
export type App = FastifyInstance<RawServerDefault, IncomingMessage, ServerResponse, FastifyBaseLogger, TypeBoxTypeProvider>;

export interface ServerOptions {
  /** A pino logger, or false for none (unit tests). */
  logger: Logger | false;
  /** Title and description of the OpenAPI document. */
  api: ApiDescription;
  /** Largest request body accepted, in bytes; default 1 MiB. */
  bodyLimit?: number;
  /**
   * Serve HTTPS with this certificate chain and key (PEM): TLS 1.2 and 1.3, HTTP/2 offered by ALPN and
   * HTTP/1.1 for clients without it. Handlers then get Node's HTTP/2 compatibility request and response,
   * the same API as HTTP/1's for what the services use.
   */
  tls?: { cert: Buffer; key: Buffer };
}

/**
 * Sends a body the route's schema cannot type (JSON text already serialized, a file stream), from a
 * route with any schema; the caller says, where the body is made, why it matches.
 */
export function sendUnchecked(reply: { send(payload: unknown): unknown }, body: unknown): void {
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
 * What an error is answered with: an HttpError its own status and message (a 5xx one logged as a
 * warning); Fastify's 4xx errors (validation, body limit, malformed JSON) in words of ours; anything
 * else a 5xx logged with its stack, the client reading no internals.
 */
function answerFor(error: unknown, log: FastifyBaseLogger, request: IncomingMessage | FastifyRequest): { status: number; message: string } {
  if (error instanceof HttpError) {
    if (error.statusCode >= 500) log.warn({ err: error }, error.message);
    return { status: error.statusCode, message: error.message };
  }
  const { statusCode = 500, validation, code = '', message } = error as Partial<FastifyError>;
  if (statusCode >= 400 && statusCode < 500) {
    return validation
      ? { status: 400, message: `Invalid request: ${message}` }
      : { status: statusCode, message: frameworkMessages[code] ?? message ?? '' };
  }
  log.error({ err: error, method: request.method, url: request.url }, 'request failed');
  return { status: statusCode >= 500 && statusCode < 600 ? statusCode : 500, message: 'Internal server error' };
}

/** The error handler's answer, as JSON, for a handler that writes Node's response itself (a hijacked reply). */
export function answerError(response: ServerResponse, error: unknown, log: FastifyBaseLogger, requestId: string): void {
  const { status, message } = answerFor(error, log.child({ reqId: requestId }), response.req);
  const body = JSON.stringify({ error: message });
  const length = Buffer.byteLength(body);
  response.writeHead(status, { 'content-type': jsonType, 'content-length': length, ...retryAfter(status), [requestIdHeader]: requestId });
  response.end(body);
}

/**
 * A body over the limit whose declared rest is at most 16 times the limit is read to its end and
 * dropped, keeping the connection: Fastify closes it, and a client still sending got a reset instead of its 413.
 */
function drainTooLargeBody(request: FastifyRequest, reply: FastifyReply, bodyLimit: number): void {
  if (!(Number(request.headers['content-length']) <= 16 * bodyLimit)) return;
  reply.removeHeader('connection');
  request.raw.resume();
}

/** Node's parser errors, as the status a client reads; anything else is a 400. */
const clientErrors: Record<string, [number, string]> = {
  HPE_HEADER_OVERFLOW: [431, 'Request header fields too large'],
  ERR_HTTP_REQUEST_TIMEOUT: [408, 'Request timeout: the request was not received in time'],
  ERR_HTTP_HEADERS_TIMEOUT: [408, 'Request timeout: the request was not received in time'],
};

/** A request Node could not parse: the JSON error with an X-Request-Id of its own, and the connection closed. */
function answerClientError(error: NodeJS.ErrnoException, socket: Socket): void {
  if (error.code === 'ECONNRESET' || !socket.writable) {
    socket.destroy();
    return;
  }
  const [status, message] = clientErrors[error.code ?? ''] ?? [400, 'Bad request: the request could not be parsed'];
  const body = JSON.stringify({ error: message });
  socket.end(
    `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: ${jsonType}\r\nContent-Length: ${Buffer.byteLength(body)}\r\n` +
      `${requestIdHeader}: ${randomUUID()}\r\nConnection: close\r\n\r\n${body}`,
  );
}

/**
 * TLS 1.3's suites, then for TLS 1.2 forward-secret AEAD suites only (Mozilla's "intermediate", as
 * deploy/nginx/https.conf): Node's default also takes CBC suites with SHA-1 MACs.
 */
const tlsCiphers = [
  'TLS_AES_128_GCM_SHA256',
  'TLS_AES_256_GCM_SHA384',
  'TLS_CHACHA20_POLY1305_SHA256',
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/**
 * A Fastify instance with what every service shares: JSON bodies only, every error answered as JSON
 * `{"error": "..."}` (before routing too; a known path's wrong method is 405 with Allow), an
 * X-Request-Id on every request and answer (request-id.ts), timeouts that keep slow or idle sockets
 * from piling up, draining on close, and an OpenAPI document of every route. CORS, /docs, metrics
 * and load shedding are plugins a service registers (index.ts).
 */
export function createServer(options: ServerOptions): App {
  let closing = false;
  const bodyLimit = options.bodyLimit ?? 1024 * 1024;
  const common = {
    // 10 s for the headers (below), 30 s for the whole request; an idle keep-alive socket lives 72 s,
    // longer than a proxy's 60 s upstream idle timeout, so that the proxy closes first.
    requestTimeout: 30_000,
    keepAliveTimeout: 72_000,
    ...(options.logger === false ? { logger: false } : { loggerInstance: options.logger }),
    bodyLimit,
    genReqId: assignRequestId,
    requestIdHeader: false as const,
    // Per-request lines cost a write each: on only at LOG_LEVEL=debug or trace.
    logController: new LogController({ disableRequestLogging: options.logger === false || !options.logger.isLevelEnabled('debug') }),
    return503OnClosing: true,
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => sendError(reply, 400, error.message),
    clientErrorHandler: answerClientError,
  };
  // Fastify infers the server and logger types from the options; every service uses the base logger type, and
  // the HTTP/2 server's requests and responses (Node's compatibility API) are used as HTTP/1's are.
  const app = (options.tls === undefined
    ? Fastify({
        ...common,
        // Node checks headersTimeout and requestTimeout every 30 s by default: a head unfinished after 10 s held its connection up to 40 s.
        http: { connectionsCheckingInterval: 1000 },
        forceCloseConnections: 'idle',
      })
    : Fastify({
        // Typed for HTTP/1's request and response; the HTTP/2 compatibility ones carry what these handlers read.
        ...(common as unknown as FastifyServerOptions<Http2SecureServer>),
        http2: true,
        https: { ...options.tls, allowHTTP1: true, minVersion: 'TLSv1.2', ciphers: tlsCiphers },
      })
  ).withTypeProvider<TypeBoxTypeProvider>() as unknown as App;
  // Node's HTTP/1 server bounds the head's time; an HTTP/2 server has no such setting (Fastify sets its idle timeout).
  if (options.tls === undefined) app.server.headersTimeout = 10_000;
  // An Expect other than 100-continue is served like any request, as nginx does (RFC 9110 allows it);
  // without a listener Node would answer 417 with an empty body before routing.
  app.server.on('checkExpectation', (request: IncomingMessage, response: ServerResponse) => app.routing(request, response));
  closeQuietConnectionsOnClose(app, options.tls !== undefined);
  // Before any route, as the document's collector: each route's methods are learned as it is added.
  const allowedMethods = learnAllowedMethods(app);
  addOpenApi(app, options.api);
  // JSON is the only body format any service accepts; anything else is a clear 415.
  app.removeContentTypeParser('text/plain');

  app.addHook('onSend', (request, reply, _payload, done) => {
    void reply.header(requestIdHeader, request.id);
    // A client kept alive goes elsewhere for its next request once we are closing (HTTP/2 has no such
    // header: Node warns and drops it; its server sends GOAWAY on close).
    if (closing && request.raw.httpVersionMajor < 2) void reply.header('connection', 'close');
    done();
  });
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  /** A request no route takes: 405 with Allow on a path that takes other methods, 404 elsewhere. */
  const answerUnrouted = (request: FastifyRequest, reply: FastifyReply): FastifyReply => {
    const path = request.url.split('?', 1)[0] ?? '';
    const allowed = allowedMethods(path);
    if (allowed.length === 0) return sendError(reply, 404, `Not found: ${request.method} ${path}`);
    return sendError(reply.header('allow', allowed.join(', ')), 405, `Method ${request.method} is not allowed on ${path}`);
  };
  app.setNotFoundHandler(answerUnrouted);
  app.setErrorHandler((error: FastifyError, request, reply) => {
    // Fastify refuses a QUERY without a Content-Type before the not-found handler runs: where no
    // route takes it, it gets the answer of any other method a path does not take.
    if (error.code === 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE' && request.is404) return answerUnrouted(request, reply);
    if (error.code === 'FST_ERR_CTP_BODY_TOO_LARGE') drainTooLargeBody(request, reply, bodyLimit);
    const { status, message } = answerFor(error, request.log, request);
    return sendError(reply, status, message);
  });
  return app;
}
