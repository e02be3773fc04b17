import type { Readable } from 'node:stream';
import { processRegistry } from '@sample-services/kit/metrics';
import { requestIdHeader } from '@sample-services/kit/request-id';
import { isConnectionLost, isUnreachable, upstreamErrorCounter, upstreamErrorKind } from '@sample-services/upstream/upstream-errors';
import {
  lookupAll,
  UpstreamAddresses,
  type Resolve,
  type UpstreamAddress,
  type UpstreamLog,
  type UpstreamTimers,
} from '@sample-services/upstream/upstream-addresses';
import type { Dispatcher } from 'undici';
import { bodyStarted, opening } from './body-start.js';

/** What the frontend asks of the backend's list: its client's method and, when given, limit and after. */
export interface UsersRequest {
  method: 'GET' | 'HEAD';
  limit?: number | undefined;
  after?: number | undefined;
  /** Aborted when the frontend's client goes away: the backend call ends with it. */
  signal: AbortSignal;
  /** The frontend request's id, sent as X-Request-Id: the backend's log lines carry the same id. */
  requestId: string;
}

/** The backend's answer once it has begun well: its headers checked, its body still arriving. */
export interface UsersAnswer {
  /** The backend's content type, a JSON one. */
  contentType: string;
  /** The backend's `Link` to the next page: relative, so valid at the frontend too. */
  link: string | undefined;
  /** The body as the backend sends it; it fails with the cause when the backend fails mid-body. */
  body: Readable;
}

export interface BackendClient {
  /**
   * Resolves once the backend answered 2xx with JSON and its first body bytes are in (or its body
   * ended empty); rejects with the cause of any failure before that.
   */
  fetchUsers: (request: UsersRequest) => Promise<UsersAnswer>;
  /** Resolves the backend's host name a first time, then keeps following it; before the server listens. */
  start: () => Promise<void>;
  close: () => Promise<void>;
}

export interface BackendClientOptions {
  /** BACKEND_URL, e.g. http://backend:5000; an https one is spoken to over TLS, its certificate checked against its host name. */
  url: URL;
  /** Longest wait to connect, for the response headers and between two body chunks (BACKEND_TIMEOUT_MS). */
  timeoutMs: number;
  log: UpstreamLog;
  /** The resolver of the backend's host name; default getaddrinfo (every address). */
  resolve?: Resolve;
  /** How often the backend's host name is resolved again; default 1 s, as the proxy's. */
  resolveIntervalMs?: number;
  /** The timers of resolving again and of passing a failed address over; default Node's. */
  timers?: UpstreamTimers;
}

const isJson = (contentType: string | undefined): contentType is string =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType);

/** One value of a response header (undici gives an array for a repeated one). */
const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(', ') : value);

/** The backend answered, but not a 2xx: an error of its own, not of the connection. */
class BadStatusError extends Error {}

/**
 * A connection that failed before any answer: nothing listens at the address (refused), it cannot
 * be reached or did not connect in time, or it was reset or closed before the response began, as
 * a kept-alive socket to a backend replica that is stopping or gone. Not a slow answer (headers
 * timeout), nor one that began: the backend may be busy, and a retry would double its load.
 */
const connectionFailed = (error: unknown): boolean => isUnreachable(error) || isConnectionLost(error);

/**
 * How many times one users request is sent at most. GET and HEAD are idempotent and carry no body,
 * so one whose connection failed before any response byte is sent again (as the proxy does,
 * services/proxy: nginx's proxy_next_upstream error). A replica that stops closes its
 * idle connections, but a request written at that instant, or to a socket whose close has not
 * arrived yet, fails so: without this, 4 of 3,015 requests through the frontend got the 500
 * during a rolling update of the backend on Docker Swarm (test/containers/swarm-stacks.test.ts).
 * Each attempt goes to another address of the backend while there is one not tried yet, else again
 * to the last (a new connection). Three attempts: a backend that is really down still gets its
 * client the 500 at once (refused) or after at most three connect timeouts. Nothing is sent again
 * once the response began, nor after a headers timeout.
 */
export const BACKEND_ATTEMPTS = 3;

/** The backend's own keep-alive timeout is 72 s: ours is shorter, so we never write to a socket it is closing. */
const IDLE_MS = 30_000;
/** nginx's default fail_timeout, as the proxy's: an address that failed to connect rests this long. */
const SKIP_FAILED_MS = 10_000;

/**
 * Calls the backend over keep-alive connections, following its host name as the proxy follows
 * web's (@sample-services/upstream): resolved again every second, a pool per address, requests in turn over
 * every address, so that replicas added by a scale-up take their share at once instead of only
 * when kept-alive connections happen to close, and a replica that went away is dropped.
 * timeoutMs bounds connecting, waiting for the response headers and each pause between two body
 * chunks while the frontend wants more, never the whole response: a list streams for as long as it
 * keeps coming. No size limit either: the body is passed on as it arrives, read no faster than the
 * frontend's client takes it.
 */
export function createBackendClient(options: BackendClientOptions): BackendClient {
  const { url, timeoutMs } = options;
  const addresses = new UpstreamAddresses({
    upstream: url,
    pool: {
      connections: 64,
      connect: { timeout: timeoutMs },
      headersTimeout: timeoutMs,
      // undici does not count the time its reading is paused because the frontend's client is slow.
      bodyTimeout: timeoutMs,
      keepAliveTimeout: IDLE_MS,
    },
    resolve: options.resolve ?? lookupAll,
    resolveIntervalMs: options.resolveIntervalMs ?? 1_000,
    skipMs: SKIP_FAILED_MS,
    log: options.log,
    timers: options.timers,
  });
  const path = `${url.pathname.replace(/\/$/, '')}/api/users`;
  // Failures by kind in the frontend's /metrics; not those of a call its own client gave up on.
  const countError = upstreamErrorCounter(processRegistry);
  const counted = (error: unknown, signal: AbortSignal): void => {
    if (!signal.aborted) countError(error instanceof BadStatusError ? 'bad_status' : upstreamErrorKind(error));
  };

  /** The request until its response begins, sent again after a connection failure (see BACKEND_ATTEMPTS). */
  const send = async (request: Dispatcher.RequestOptions & { signal: AbortSignal }): Promise<Dispatcher.ResponseData> => {
    const tried: UpstreamAddress[] = [];
    for (let attempt = 1; ; attempt += 1) {
      const target = attempt === 1 ? addresses.pick() : (addresses.another(tried) ?? tried.at(-1));
      if (target === undefined) throw addresses.noAddressError;
      try {
        return await target.pool.request(request);
      } catch (error) {
        // Every failed attempt counts, retried or not, as in the proxy's metrics.
        counted(error, request.signal);
        if (request.signal.aborted || attempt >= BACKEND_ATTEMPTS || !connectionFailed(error)) throw error;
        if (isUnreachable(error)) addresses.skip(target, error);
        if (!tried.includes(target)) tried.push(target);
      }
    }
  };

  return {
    async fetchUsers({ method, limit, after, signal, requestId }) {
      const query = new URLSearchParams();
      if (limit !== undefined) query.set('limit', String(limit));
      if (after !== undefined) query.set('after', String(after));
      const search = query.size > 0 ? `?${query.toString()}` : '';
      const requestHeaders: Record<string, string> = { accept: 'application/json', [requestIdHeader]: requestId };
      const options = { method, path: path + search, headers: requestHeaders, signal };
      const { statusCode, headers, body } = await send(options);
      try {
        if (statusCode < 200 || statusCode > 299) throw new BadStatusError(`backend answered ${statusCode}: ${await opening(body)}`);
        const contentType = single(headers['content-type']);
        if (!isJson(contentType)) {
          throw new Error(`backend answered ${contentType === undefined ? 'no content type' : `content type ${contentType}`}, not JSON`);
        }
        await bodyStarted(body);
        // A failure mid-body (the response is then cut) counts too.
        body.once('error', (error) => counted(error, signal));
        return { contentType, link: single(headers.link), body };
      } catch (error) {
        counted(error, signal);
        body.destroy();
        throw error;
      }
    },
    start: () => addresses.start(),
    close: () => addresses.close(),
  };
}
