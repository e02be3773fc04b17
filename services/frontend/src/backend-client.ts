import type { Readable } from 'node:stream';
import { requestIdHeader, upstreamErrorCounter, upstreamErrorKind } from '@svc/kit';
import { Pool } from 'undici';
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

const isJson = (contentType: string | undefined): contentType is string =>
  contentType !== undefined && /^application\/json\s*(;|$)/i.test(contentType);

/** One value of a response header (undici gives an array for a repeated one). */
const single = (value: string | string[] | undefined): string | undefined => (Array.isArray(value) ? value.join(', ') : value);

/** The backend answered, but not a 2xx: an error of its own, not of the connection. */
class BadStatusError extends Error {}

/**
 * Calls the backend over a pool of keep-alive connections. timeoutMs bounds connecting, waiting for
 * the response headers and each pause between two body chunks while the frontend wants more, never
 * the whole response: a list streams for as long as it keeps coming. No size limit either: the body
 * is passed on as it arrives, read no faster than the frontend's client takes it.
 */
export function createBackendClient(backendUrl: URL, timeoutMs: number): BackendClient {
  const pool = new Pool(backendUrl.origin, {
    connections: 64,
    connectTimeout: timeoutMs,
    headersTimeout: timeoutMs,
    // undici does not count the time its reading is paused because the frontend's client is slow.
    bodyTimeout: timeoutMs,
    // Idle sockets are dropped well before the backend's own 72 s keep-alive timeout, so we
    // never write to a socket the backend is closing.
    keepAliveTimeout: 30_000,
  });
  const path = `${backendUrl.pathname.replace(/\/$/, '')}/api/users`;
  // Failures by kind in the frontend's /metrics; not those of a call its own client gave up on.
  const countError = upstreamErrorCounter();
  const counted = (error: unknown, signal: AbortSignal): void => {
    if (!signal.aborted) countError(error instanceof BadStatusError ? 'bad_status' : upstreamErrorKind(error));
  };

  return {
    async fetchUsers({ method, limit, after, signal, requestId }) {
      const query = new URLSearchParams();
      if (limit !== undefined) query.set('limit', String(limit));
      if (after !== undefined) query.set('after', String(after));
      const search = query.size > 0 ? `?${query.toString()}` : '';
      const { statusCode, headers, body } = await pool
        .request({ method, path: path + search, headers: { accept: 'application/json', [requestIdHeader]: requestId }, signal })
        .catch((error: unknown) => {
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
    close: () => pool.close(),
  };
}
