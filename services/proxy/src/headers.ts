import type { IncomingHttpHeaders } from 'node:http';
import { requestIdHeader } from '@sample-services/kit/request-id';

/**
 * Headers that describe one connection rather than the message (RFC 9110 7.6.1), so a
 * proxy must not pass them on in either direction. `expect` is answered here (Node sends
 * 100 Continue itself) and the three forwarding headers are replaced, not copied.
 */
const hopByHop = new Set(['connection', 'keep-alive', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
const replacedOnRequest = new Set([...hopByHop, 'expect', 'host', 'x-real-ip', 'x-forwarded-for', 'x-forwarded-proto', requestIdHeader]);

/** Server name used as Host when the client sent none (HTTP/1.0), as nginx's `server_name localhost`. */
const defaultHost = 'localhost';

/** Names listed in the Connection headers are hop-by-hop too; usually there are none to add. */
function connectionTokens(connection: string | string[] | undefined): Set<string> | undefined {
  // The common values name no header: skip the split on the hot path.
  const value = Array.isArray(connection) ? connection.join(',') : connection;
  if (value === undefined || value === 'keep-alive' || value === 'close') return undefined;
  let tokens: Set<string> | undefined;
  for (const token of value.toLowerCase().split(',')) {
    const name = token.trim();
    if (name === '' || name === 'close' || name === 'keep-alive') continue;
    (tokens ??= new Set()).add(name);
  }
  return tokens;
}

function isHopByHop(name: string, set: Set<string>, named: Set<string> | undefined): boolean {
  return set.has(name) || name.startsWith('proxy-') || (named !== undefined && named.has(name));
}

/**
 * The end-to-end headers of a message as the flat [name, value, ...] list undici takes and Node
 * writes as it is (no header object per message): those in `dropped`, those the Connection header
 * names and Proxy-* are left out; a name given more than once (Set-Cookie) keeps every value, in order.
 * `fromClient`: names with an underscore are left out too, as nginx ignores them in a client's request
 * (underscores_in_headers off), so that `X_Real_IP` never passes for `X-Real-IP` behind it, and HTTP/2's
 * pseudo-headers (`:path`, `:authority`), which Node lists among the headers and HTTP/1 cannot carry.
 */
function endToEnd(headers: IncomingHttpHeaders, dropped: Set<string>, fromClient: boolean): string[] {
  const named = connectionTokens(headers.connection);
  const out: string[] = [];
  for (const name in headers) {
    const value = headers[name];
    if (value === undefined || isHopByHop(name, dropped, named) || (fromClient && (name.includes('_') || name.startsWith(':')))) continue;
    if (typeof value === 'string') out.push(name, value);
    else for (const item of value) out.push(name, item);
  }
  return out;
}

/**
 * The host name of the request as nginx's `$host` gives it: from the Host header, lower
 * case and without the port; `localhost` when there is none.
 */
export function hostOf(host: string | undefined): string {
  if (host === undefined || host === '') return defaultHost;
  const end = host.startsWith('[') ? host.indexOf(']') + 1 : host.indexOf(':');
  return (end > 0 ? host.slice(0, end) : host).toLowerCase();
}

/**
 * The request headers for the upstream, as the flat [name, value, ...] list undici takes:
 * the client's end-to-end headers (none whose name has an underscore), then Host, X-Real-IP and X-Forwarded-For (spec 4.4),
 * X-Forwarded-Proto (the scheme the client used, as nginx's `$scheme`), and
 * X-Request-Id: the request's id, the client's own when well formed (the kit decides), so the
 * upstream's log lines carry the same id as ours. `host` is the Host header (HTTP/2's `:authority`
 * without one), or the host of an absolute request target.
 */
export function upstreamRequestHeaders(
  headers: IncomingHttpHeaders,
  host: string | undefined,
  clientAddress: string,
  requestId: string,
  scheme: 'http' | 'https' = 'http',
): string[] {
  const out = endToEnd(headers, replacedOnRequest, true);
  const chain = headers['x-forwarded-for'];
  out.push(
    'host',
    hostOf(host),
    'x-real-ip',
    clientAddress,
    'x-forwarded-for',
    chain === undefined || chain === '' ? clientAddress : `${chain}, ${clientAddress}`,
    'x-forwarded-proto',
    scheme,
    requestIdHeader,
    requestId,
  );
  return out;
}

/** Dropped from the upstream's answer: the client reads the request's own id, the one the upstream was sent. */
const replacedOnResponse = new Set([...hopByHop, requestIdHeader]);

/**
 * The upstream's response headers for the client: its end-to-end ones, from the object undici
 * parsed them into (names in lower case, values latin1, a repeated name's values in an array),
 * and the request's id. Node frames the body itself.
 */
export function clientResponseHeaders(headers: IncomingHttpHeaders, requestId: string): string[] {
  const out = endToEnd(headers, replacedOnResponse, false);
  out.push(requestIdHeader, requestId);
  return out;
}

/** Where the header `name` (lower case) is in a flat [name, value, ...] list, or -1. */
function indexOfName(head: readonly string[], name: string): number {
  for (let i = 0; i < head.length; i += 2) if ((head[i] as string).toLowerCase() === name) return i;
  return -1;
}

/** The Content-Length of a flat header list as a number, NaN when it has none. */
export function declaredLength(headers: readonly string[]): number {
  const at = indexOfName(headers, 'content-length');
  return at < 0 ? NaN : Number(headers[at + 1]);
}
