/**
 * The kit's response class (Node's `ServerResponse` option): what every answer carries, written where
 * its head is written rather than in a hook run per request.
 */
import { ServerResponse, type IncomingMessage } from 'node:http';
import { addAllowOrigin } from './cors.js';
import { isFlatList, setInFlatList, type Head } from './flat-head.js';
import { requestIdHeader, requestIdOf } from './request-id.js';
import { ABORTED, type RequestMetrics, type RouteCells } from './request-metrics.js';

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
 * A response class that, where the head is written, adds `Access-Control-Allow-Origin: *` (when
 * cors), the request's X-Request-Id and, once the server is closing, `Connection: close`; and, given
 * metrics, that counts the request (in flight from its construction, when the request head has been
 * read, to its 'close', which every response emits, finished or cut). As hooks they would cost every
 * request a hook run. inject() writes through its own response class, so tests check these over a socket.
 */
export function responseClass({ cors, closing, metrics }: ResponseOptions): typeof ServerResponse {
  class Response<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
    // One signature for both forms of the base method: (status, message?, headers?) and (status, headers?).
    override writeHead(statusCode: number, messageOrHeaders?: string | Head, headers?: Head): this {
      const head = typeof messageOrHeaders === 'string' ? headers : messageOrHeaders;
      if (closing()) setHeader(this, head, 'connection', 'close');
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

/** A handler that answers on Node's own request and response. */
export type RawHandler = (request: IncomingMessage, response: ServerResponse) => void;
