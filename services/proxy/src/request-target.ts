import { HttpError } from '@sample-services/kit/errors';

/** Where a request goes upstream: the origin-form path, and the host it names. */
export interface RequestTarget {
  path: string;
  host: string | undefined;
}

const notForwardable = (target: string): HttpError =>
  new HttpError(400, `Request target must be a path or an absolute http URL, got "${target}"`);

/**
 * Clients send `/path?query` and name the host in Host, but a request line may also carry
 * an absolute URL (`GET http://host/path`), which a server must accept (RFC 9112 3.2.2).
 * As nginx does, the upstream then gets the path alone, and the URL's host wins over the
 * Host header. Anything else (`OPTIONS *`, `GET foo`) cannot be forwarded: 400, as is a path
 * whose percent-encoding does not decode (`/%zz`), which nginx refuses too.
 */
export function requestTarget(target: string, hostHeader: string | undefined): RequestTarget {
  if (target.startsWith('/')) return { path: decodablePath(target), host: hostHeader };
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw notForwardable(target);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw notForwardable(target);
  return { path: decodablePath(`${url.pathname}${url.search}`), host: url.host };
}

/** The path as it is, once its part before the query is known to decode; most have no `%` to check. */
function decodablePath(path: string): string {
  const end = path.indexOf('?');
  const beforeQuery = end < 0 ? path : path.slice(0, end);
  if (beforeQuery.includes('%')) {
    try {
      decodeURIComponent(beforeQuery);
    } catch {
      // Fastify's words, which every service answers for such a path (and the proxy's routes too).
      throw new HttpError(400, `'${beforeQuery}' is not a valid url component`);
    }
  }
  return path;
}
