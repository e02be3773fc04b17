import type { Readable } from 'node:stream';
import { processRegistry, requestIdHeader } from '@svc/kit';
import { upstreamDispatcher, upstreamErrorCounter, upstreamErrorKind, type Resolve, type UpstreamLog } from '@svc/upstream';
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
  /** How old an answer for the backend's host name may grow before it is resolved again; default 1 s, as the proxy's. */
  resolveIntervalMs?: number;
}

const isJson = (contentType: string | undefined): contentType is string =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType);

/** One value of a response header (undici gives an array for a repeated one). */
const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(', ') : value);

/** The backend answered, but not a 2xx: an error of its own, not of the connection. */
class BadStatusError extends Error {}

/**
 * How many times one users request is sent at most. GET and HEAD are idempotent and carry no body,
 * so one whose connection failed before any response byte (refused, unreachable, reset, closed) is
 * sent again, as the proxy does (nextUpstream, in @svc/upstream: nginx's proxy_next_upstream error).
 * A replica that stops closes its idle connections, but a request written at that instant, or to a
 * socket whose close has not arrived yet, fails so: without this, 4 of 3,015 requests through the
 * frontend got the 500 during a rolling update of the backend on Docker Swarm
 * (test/containers/swarm-two-tier.test.ts). Each attempt goes to another address of the backend while
 * there is one not tried yet, else, after a lost connection, again to the last. Three attempts: a
 * backend that is really down still gets its client the 500 at once (refused) or after at most three
 * connect timeouts. Nothing is sent again once the response began, nor after a headers timeout.
 */
export const BACKEND_ATTEMPTS = 3;

/** The backend's own keep-alive timeout is 72 s: ours is shorter, so we never write to a socket it is closing. */
const IDLE_MS = 30_000;

/**
 * Calls the backend over keep-alive connections, following its host name as the proxy follows
 * web's (upstreamDispatcher, in @svc/upstream): resolved again once an answer is a second old, a pool
 * per address, requests in turn over every address, so that replicas added by a scale-up take their
 * share at once instead of only when kept-alive connections happen to close, and a replica that went
 * away is dropped.
 * timeoutMs bounds connecting, waiting for the response headers and each pause between two body
 * chunks while the frontend wants more, never the whole response: a list streams for as long as it
 * keeps coming. No size limit either: the body is passed on as it arrives, read no faster than the
 * frontend's client takes it.
 */
export function createBackendClient(options: BackendClientOptions): BackendClient {
  const { url, timeoutMs } = options;
  // Failures by kind in the frontend's /metrics; not those of a call its own client gave up on.
  const countError = upstreamErrorCounter(processRegistry);
  const counted = (error: unknown, signal: AbortSignal): void => {
    if (!signal.aborted) countError(error instanceof BadStatusError ? 'bad_status' : upstreamErrorKind(error));
  };
  const backend = upstreamDispatcher({
    upstream: url,
    agent: {
      connections: 64,
      connect: { timeout: timeoutMs },
      headersTimeout: timeoutMs,
      // undici does not count the time its reading is paused because the frontend's client is slow.
      bodyTimeout: timeoutMs,
      keepAliveTimeout: IDLE_MS,
    },
    resolve: options.resolve,
    resolveIntervalMs: options.resolveIntervalMs ?? 1_000,
    attempts: BACKEND_ATTEMPTS,
    // Every failed attempt counts, sent again or not, as in the proxy's metrics.
    onRetry: (error) => countError(upstreamErrorKind(error)),
    log: options.log,
  });
  const origin = new URL(url.origin);
  const path = `${url.pathname.replace(/\/$/, '')}/api/users`;

  return {
    async fetchUsers({ method, limit, after, signal, requestId }) {
      const query = new URLSearchParams();
      if (limit !== undefined) query.set('limit', String(limit));
      if (after !== undefined) query.set('after', String(after));
      const search = query.size > 0 ? `?${query.toString()}` : '';
      const requestHeaders: Record<string, string> = { accept: 'application/json', [requestIdHeader]: requestId };
      const options = { origin, method, path: path + search, headers: requestHeaders, signal };
      const { statusCode, headers, body } = await backend.request(options).catch((error: unknown) => {
        counted(error, signal);
        throw error;
      });
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
    close: () => backend.close(),
  };
}
