/**
 * The speed tricks of the kit, in one place. Each was measured with `npm run bench` (bench/README.md)
 * and each reaches into how Fastify or pino work inside, so a minor release could silently undo
 * it: packages/kit/test/fast-paths.test.ts fails when one stops working.
 *
 * 1. No pino child logger per request unless the request writes a line (withoutRequestChildren).
 * 2. CORS, X-Request-Id, shutdown's `Connection: close` and the request metrics (unless the app
 *    has none) where the response is made and its head written, not in hooks (responseClass).
 * 3. JSON.stringify for a response whose numbers change on every request (stringifyWithJson).
 * 4. Never awaiting a Fastify instance (a thenable): see ServiceDefinition.build in run.ts.
 * 5. Requests answered before Fastify routes them, for a service that handles every path alike
 *    (answerBeforeRouting).
 * 6. With beforeRouting, Node's `optimizeEmptyRequests` (server.ts): a request without a body comes
 *    already ended, so Node runs none of a stream's end of life for it (about 14% of the proxy's
 *    user-space instructions per GET). Such a request never emits 'end' or 'close': Fastify's body
 *    parsers would wait forever on one with a Content-Type, so the service's routes must not parse
 *    bodies, and a client that goes away is seen on the response's 'close', never on the request's.
 */
import { ServerResponse, type IncomingMessage, type Server } from 'node:http';
import type { Bindings, ChildLoggerOptions, Level } from 'pino';
import { addAllowOrigin } from './cors.js';
import { isFlatList, setInFlatList, type Head } from './head.js';
import type { Logger } from './logger.js';
import { assignRequestId, requestIdHeader, requestIdOf } from './request-id.js';
import { ABORTED, type RequestMetrics, type RouteCells } from './request-metrics.js';

type LogArgs = [obj: unknown, msg?: string, ...args: unknown[]];

/**
 * A request's logger that makes its pino child (which binds the request id) only when the request
 * writes a line: with request logging off, most requests write none, and pino's child and its
 * bindings' serialization showed in profiles. Its lines carry `reqId`, the request's X-Request-Id.
 */
class RequestLogger {
  private child: Logger | undefined;
  constructor(
    private readonly logger: Logger,
    private readonly fields: Bindings,
  ) {}

  get level(): string {
    return this.logger.level;
  }

  isLevelEnabled(level: string): boolean {
    return this.logger.isLevelEnabled(level);
  }

  private write(level: Level, args: LogArgs): void {
    if (this.logger.isLevelEnabled(level)) (this.child ??= this.logger.child(this.fields))[level](...args);
  }

  fatal(...args: LogArgs): void {
    this.write('fatal', args);
  }
  error(...args: LogArgs): void {
    this.write('error', args);
  }
  warn(...args: LogArgs): void {
    this.write('warn', args);
  }
  info(...args: LogArgs): void {
    this.write('info', args);
  }
  debug(...args: LogArgs): void {
    this.write('debug', args);
  }
  trace(...args: LogArgs): void {
    this.write('trace', args);
  }
  silent(): void {}
}

/**
 * 1. Fastify gives each request a child logger that binds its id, which ties the request's lines
 * together. Without request logging a request seldom writes a line (an error, a warning), so here
 * each request gets a RequestLogger, which makes that child only for a line it writes. Fastify's
 * own child factory is kept: a custom one is re-validated on every request. Fastify wraps the
 * logger it is given in a child of its own, so children of children must keep the behaviour too.
 */
export function withoutRequestChildren(logger: Logger): Logger {
  const child = (bindings: Bindings, childOptions?: ChildLoggerOptions): Logger =>
    bindings.reqId !== undefined
      ? (new RequestLogger(logger, bindings) as unknown as Logger) // the levels, child-less: all Fastify calls on a request's logger
      : withoutRequestChildren(logger.child(bindings, childOptions));
  // Inherits everything else (level, streams, bindings) from the logger, as pino's own children do.
  return Object.create(logger, { child: { value: child } }) as Logger;
}

export interface ResponseOptions {
  cors: boolean;
  closing: () => boolean;
  /** Where each request is counted; undefined for an app without metrics, whose responses count nothing. */
  metrics: RequestMetrics | undefined;
}

/** A response made by responseClass with metrics: which route's cells it counts in, or null for none. */
interface MeteredResponse extends ServerResponse {
  route: RouteCells | null;
}

/**
 * 2. A response class that, where the head is written, adds `Access-Control-Allow-Origin: *` (when
 * cors), the request's X-Request-Id and, once the server is closing, ends the connection after the
 * response; and, given metrics, that counts the request (in flight from its construction, which is
 * when the request head has been read, to its 'close', which every response emits, finished or
 * cut). As hooks they cost every request a hook run (@fastify/cors: about 8% of variant A's
 * throughput). inject() writes through its own response class, so tests check these over a socket.
 */
export function responseClass({ cors, closing, metrics }: ResponseOptions): typeof ServerResponse {
  class Response<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
    // One signature for both forms of the base method: (status, message?, headers?) and (status, headers?).
    override writeHead(statusCode: number, messageOrHeaders?: string | Head, headers?: Head): this {
      if (closing()) this.shouldKeepAlive = false;
      const head = typeof messageOrHeaders === 'string' ? headers : messageOrHeaders;
      if (cors) addAllowOrigin(this, head);
      const id = requestIdOf(this.req);
      if (id !== undefined) setHeader(this, head, requestIdHeader, id);
      return super.writeHead(statusCode, messageOrHeaders as string, headers);
    }
  }
  if (metrics === undefined) return Response;
  const requests = metrics;

  // One listener for every response (`this` is the response): no closure per request.
  function closed(this: Metered): void {
    if (this.route === null) return;
    requests.inFlight--;
    const seconds = (performance.now() - this.startedAt) / 1000;
    requests.record(this.route, this.req.method ?? 'GET', this.writableFinished ? this.statusCode : ABORTED, seconds);
  }

  class Metered<Request extends IncomingMessage = IncomingMessage> extends Response<Request> implements MeteredResponse {
    /** The route's cells, set by its handler (labelRoutes); until then, and for requests no route takes, unmatched. */
    route: RouteCells | null = requests.unmatched;
    readonly startedAt = performance.now();

    // Node passes options (highWaterMark...) after the request, which the typings leave out: all are passed on.
    constructor(...args: [request: Request]) {
      super(...args);
      requests.inFlight++;
      this.on('close', closed);
    }
  }
  return Metered;
}

/** Sets a header on a response whose head is about to be written with `head`, replacing any of that name. */
function setHeader(response: ServerResponse, head: Head | undefined, name: string, value: string): void {
  if (isFlatList(head)) setInFlatList(head, name, value);
  else if (head === undefined || Array.isArray(head)) response.setHeader(name, value);
  else head[name] = value;
}

/** Counts the response in the route's cells (called by the route's handler). */
export function meterAs(response: ServerResponse, route: RouteCells): void {
  const metered = response as MeteredResponse;
  if (metered.route !== null) metered.route = route;
}

/** Leaves the response out of the request metrics (the scrape itself), in flight included. */
export function leaveUncounted(response: ServerResponse, metrics: RequestMetrics): void {
  const metered = response as Partial<MeteredResponse>;
  // inject()'s responses are not counted in the first place.
  if (!('startedAt' in metered) || metered.route === null) return;
  metered.route = null;
  metrics.inFlight--;
}

/**
 * 3. A route serializer for answers with a number that is new on every request (variant A's
 * uptime). fast-json-stringify writes numbers as `'' + n`, and V8 keeps such strings in its
 * number-to-string cache, so each request promoted one string to the old generation (old space grew
 * under load, RSS +10 MB); JSON.stringify does not. The route keeps its schema for types and docs.
 */
export const stringifyWithJson = (): ((data: unknown) => string) => JSON.stringify;

/** A handler that answers on Node's own request and response. */
export type RawHandler = (request: IncomingMessage, response: ServerResponse) => void;

/**
 * 5. Fastify's listener on its server is replaced by one that gives each request its id and its
 * route's cells (as genReqId and labelRoutes do) and hands it to `handler`, skipping Fastify's
 * routing, its request and reply objects and their hooks: for the proxy, which forwards every path
 * alike, about 2-3% of its CPU per request. Fastify still takes a request when `routed()` says so
 * (while closing, for its 503; with request logging on, for its lines), and inject()'s requests,
 * which never reach the server: so the service's routes must answer as `handler` does.
 */
export function answerBeforeRouting(server: Server, routed: () => boolean, route: RouteCells | undefined, handler: RawHandler): void {
  const listeners = server.listeners('request') as RawHandler[];
  const fastify = listeners[0];
  if (listeners.length !== 1 || fastify === undefined) {
    throw new Error(`Fastify's server has ${listeners.length} request listeners, not 1: answerBeforeRouting needs updating`);
  }
  server.removeListener('request', fastify);
  server.on('request', (request: IncomingMessage, response: ServerResponse) => {
    if (routed()) return fastify(request, response);
    assignRequestId(request);
    if (route !== undefined) meterAs(response, route);
    handler(request, response);
  });
}
