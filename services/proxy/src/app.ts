import { METHODS } from 'node:http';
import { countRequests } from '@sample-services/kit/metrics';
import { createServer, type App } from '@sample-services/kit/server';
import { errorAnswer } from '@sample-services/kit/schemas';
import { notInDocument } from '@sample-services/kit/openapi';
import type { Logger } from '@sample-services/kit/logger';
import { service } from './service.js';
import { serveMetricsOnPort } from './metrics-port.js';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Dispatcher } from 'undici';
import { ResponseRelay, type UpstreamRequest } from './response-relay.js';
import { upstreamRequestHeaders } from './headers.js';
import { discardRequestBody, upstreamRequestBody } from './request-body.js';
import { requestTarget } from './request-target.js';
import { refusal } from './client-request.js';
import { forwardOneAtATime } from './one-at-a-time.js';
import { redirectToHttps, sendHsts } from './https-redirect.js';
import { lookupAll, UpstreamAddresses, type Resolve } from '@sample-services/upstream/upstream-addresses';

export interface ProxyAppOptions {
  logger: Logger | false;
  /** Origin every request goes to, e.g. http://web:3000. */
  upstream: URL;
  /** MAX_CONNECTIONS: the client connections open at once (runService), so the most requests in flight to the upstream. */
  maxConnections: number;
  /** Longest wait to connect, for the response to begin, and between two body reads. */
  upstreamTimeoutMs: number;
  /** Largest request body, in bytes; default 1 MiB like nginx's client_max_body_size. */
  bodyLimit?: number;
  /** How often the upstream's host name is resolved again; default 1000 ms (UPSTREAM_RESOLVE_MS). */
  resolveIntervalMs?: number;
  /** The resolver of the upstream's host name; default getaddrinfo (dns.lookup, every address). */
  resolve?: Resolve;
  /** How long an address that failed to connect is passed over; default 10 s, nginx's fail_timeout. */
  skipFailedMs?: number;
  /** Where to serve GET /metrics, apart from the forwarded port (METRICS_PORT); undefined: nowhere. */
  metrics?: { port: number; host: string } | undefined;
  /** Serve HTTPS (HTTP/2 and HTTP/1.1) with this certificate and key; X-Forwarded-Proto is then https. */
  tls?: { cert: Buffer; key: Buffer } | undefined;
  /** With `tls`: Strict-Transport-Security's max-age on every answer, in seconds; 0 or undefined: none. */
  hstsMaxAge?: number | undefined;
  /** Answer 308 to HTTPS on this port, except the health paths (https-redirect.ts); undefined: forward all. */
  redirectToHttpsPort?: number | undefined;
}

const MiB = 1024 * 1024;
/** The route template of every forwarded request, in the routes and the request metrics. */
const forwardedRoute = '/*';

const openApiMethods = new Set(['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS', 'HEAD', 'PATCH', 'TRACE']);

/** What the document says of the catch-all: the upstream answers, or one of the proxy's own errors. */
const forwardSchema = {
  summary: "Forwarded to the upstream; its answer comes back unchanged (see the upstream's own /openapi.json)",
  response: {
    400: errorAnswer('A request the proxy cannot parse or forward', 'Request target must be a path or an absolute http URL, got "*"'),
    413: errorAnswer('Request body over 1 MiB (nginx: client_max_body_size 1m)', 'Request body is too large'),
    502: errorAnswer('The upstream refused, reset, closed early or is down', 'Bad gateway: upstream unavailable'),
    504: errorAnswer('The upstream did not connect or answer in time', 'Gateway timeout: upstream did not answer in time'),
  },
};
/** Idle upstream connections are kept this long: nginx's upstream keepalive_timeout, and
 * below the services' 72 s, so that we close first and never reuse a closing socket. */
const UPSTREAM_IDLE_MS = 60_000;
/**
 * A replica that stopped leaves its address in the host's neighbour cache: connects to it are
 * dropped without an answer, and would hang for the whole upstream timeout before going to another
 * address. Not nginx.conf's 1 s: a connect that times out passes the address over for
 * SKIP_FAILED_MS, and at 1 s a replica just started under load was passed over for that long;
 * nginx forgets failures at each re-resolution.
 */
const CONNECT_TIMEOUT_MS = 2_000;
/** nginx's default fail_timeout (with max_fails=1): an address that failed to connect rests this long. */
const SKIP_FAILED_MS = 10_000;

/**
 * The reverse proxy of spec 4.4: every method and path to one upstream, bodies streamed
 * both ways, Host / X-Real-IP / X-Forwarded-For set as nginx sets them, connections to the
 * upstream kept alive, and the same JSON errors (400, 413, 502, 504) as deploy/nginx/nginx.conf.
 * Transparent: no CORS or 404 of its own, the upstream answers those.
 * The upstream's host name is followed as it resolves over time, requests spread over all its
 * addresses, and one that fails to connect is retried on another (see UpstreamAddresses, ResponseRelay).
 */
export function createProxyApp(options: ProxyAppOptions): App {
  const bodyLimit = options.bodyLimit ?? MiB;
  // The body limit is enforced here, on the stream: Fastify's applies only to bodies it parses.
  // Transparent: no CORS, /openapi.json, /docs, /metrics or load shedding of its own, as nginx; those
  // paths are its upstream's. Its requests are counted, served on a port of their own (METRICS_PORT).
  const app = createServer({ logger: options.logger, api: { title: 'proxy', description: service.summary }, tls: options.tls });
  const scheme = options.tls === undefined ? 'http' : 'https';
  if (options.tls !== undefined && (options.hstsMaxAge ?? 0) > 0) sendHsts(app, options.hstsMaxAge ?? 0);
  void app.register(countRequests);
  let closing = false;
  app.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  if (options.redirectToHttpsPort !== undefined) redirectToHttps(app, options.redirectToHttpsPort);
  // One request per client connection at a time, before any other hook that forwards.
  forwardOneAtATime(app);
  if (options.metrics !== undefined) serveMetricsOnPort(app, options.metrics);
  const upstream = new UpstreamAddresses({
    upstream: options.upstream,
    // A pool per address: the Host header is the client's ($host), never the address.
    pool: {
      // One request in flight per client connection at most (forwardOneAtATime), and at most
      // MAX_CONNECTIONS of those (runService), so this never queues.
      connections: options.maxConnections,
      connect: { timeout: Math.min(CONNECT_TIMEOUT_MS, options.upstreamTimeoutMs) },
      headersTimeout: options.upstreamTimeoutMs,
      bodyTimeout: options.upstreamTimeoutMs,
      keepAliveTimeout: UPSTREAM_IDLE_MS,
      keepAliveMaxTimeout: UPSTREAM_IDLE_MS,
    },
    resolve: options.resolve ?? lookupAll,
    resolveIntervalMs: options.resolveIntervalMs ?? 1000,
    skipMs: options.skipFailedMs ?? SKIP_FAILED_MS,
    log: app.log,
  });
  // The first answer is in before the server listens (a failure is logged and resolving goes on).
  app.addHook('onReady', async () => upstream.start());
  // Runs after the server stopped taking requests; close() lets in-flight ones finish.
  app.addHook('onClose', async () => upstream.close());

  // Bodies are passed on as streams, never parsed: any content type is accepted as is.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_request, _payload, done) => done(null));

  /**
   * The route's handler: the relay answers on Node's response, with the upstream's response or the
   * JSON error when the upstream failed before one began; a request that cannot be forwarded goes
   * to the error handler.
   */
  function forward(request: FastifyRequest, reply: FastifyReply): void {
    const raw = request.raw;
    let sent: UpstreamRequest & { headers: string[] };
    try {
      const refused = refusal(raw);
      if (refused !== undefined) throw refused;
      // HTTP/2 names the host in :authority, which Host (when a client sends both) wins over, as in nginx.
      const target = requestTarget(raw.url ?? '/', raw.headers.host ?? (raw.headers[':authority'] as string | undefined));
      sent = {
        method: raw.method as Dispatcher.HttpMethod,
        path: target.path,
        headers: upstreamRequestHeaders(raw.headers, target.host, raw.socket.remoteAddress ?? '', request.id, scheme),
        body: upstreamRequestBody(raw, bodyLimit),
      };
    } catch (error) {
      discardRequestBody(raw);
      void reply.send(error);
      return;
    }
    // The relay writes the upstream's head and chunks on Node's response itself, with backpressure both
    // ways: the same stream passed through reply.send costs markedly more CPU per request.
    reply.hijack();
    new ResponseRelay(reply.raw, upstream, sent, request.id, () => closing, app.log).start();
  }

  // Node parses more methods than Fastify routes by default (WebDAV, PURGE, ...), and nginx
  // passes them all on; CONNECT never reaches a route (Node hands it to a 'connect' event).
  for (const method of METHODS) {
    if (method !== 'CONNECT' && !app.supportedMethods.includes(method)) app.addHttpMethod(method, { hasBody: true });
  }
  // OpenAPI can describe only its own eight methods; the others are forwarded the same way.
  const documented = METHODS.filter((method) => openApiMethods.has(method));
  const undocumented = METHODS.filter((method) => method !== 'CONNECT' && !openApiMethods.has(method));
  void app.register((routes: App, _options, done) => {
    // Fastify refuses a QUERY without a Content-Type before the handler runs; nginx passes it on,
    // and so do we (the upstream answers it). Every other error goes to the kit's handler.
    routes.setErrorHandler((error: FastifyError, request, reply) => {
      if (error.code !== 'FST_ERR_ROUTE_MISSING_CONTENT_TYPE') throw error;
      forward(request, reply);
    });
    routes.route({ method: documented, url: forwardedRoute, schema: forwardSchema, handler: forward });
    routes.route({ method: undocumented, url: forwardedRoute, schema: notInDocument, handler: forward });
    done();
  });
  return app;
}
