import { HttpError } from '@svc/kit';

/** Where a request goes upstream: the origin-form path, and the host it names. */
export interface RequestTarget {
  path: string;
  host: string;
}

/**
 * Clients send `/path?query` and name the host in Host, but a request line may also carry
 * an absolute URL (`GET http://host/path`), which a server must accept (RFC 9112 3.2.2).
 * As nginx does, the upstream then gets the path alone, and the URL's host wins over the
 * Host header. Anything else (`OPTIONS *`, `GET foo`) cannot be forwarded: 400.
 */
export function absoluteFormTarget(target: string): RequestTarget {
  let url: URL;
  try {
    url = new URL(target);
  } catch {
    throw new HttpError(400, `Request target must be a path or an absolute http URL, got "${target}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new HttpError(400, `Request target must be a path or an absolute http URL, got "${target}"`);
  }
  return { path: `${url.pathname}${url.search}`, host: url.host };
}
