import { Counter, type Registry } from 'prom-client';

/** Why a call to an upstream (the proxy's web, the frontend's backend) failed, as its metric counts it. */
export type UpstreamErrorKind = 'refused' | 'timeout' | 'reset' | 'bad_status' | 'other';

/**
 * What a failure left of the connection: `unreachable`, the address could not be connected to
 * (such an address is passed over for a while); `lost`, the connection broke or the upstream
 * closed it (undici: "other side closed") before any answer; `none`, neither.
 */
type Connection = 'unreachable' | 'lost' | 'none';

/** Every code of Node or undici that a failed upstream call is told by, once: its kind, and what it says of the connection. */
const byCode: Record<string, readonly [Exclude<UpstreamErrorKind, 'bad_status' | 'other'>, Connection]> = {
  ECONNREFUSED: ['refused', 'unreachable'],
  EHOSTUNREACH: ['refused', 'unreachable'],
  ENETUNREACH: ['refused', 'unreachable'],
  EHOSTDOWN: ['refused', 'unreachable'],
  ENETDOWN: ['refused', 'unreachable'],
  EADDRNOTAVAIL: ['refused', 'unreachable'],
  // The name did not resolve: there is no address to pass over.
  ENOTFOUND: ['refused', 'none'],
  EAI_AGAIN: ['refused', 'none'],
  ETIMEDOUT: ['timeout', 'unreachable'],
  UND_ERR_CONNECT_TIMEOUT: ['timeout', 'unreachable'],
  // A slow answer: the upstream may be busy, and sending the request elsewhere would double its load.
  UND_ERR_HEADERS_TIMEOUT: ['timeout', 'none'],
  UND_ERR_BODY_TIMEOUT: ['timeout', 'none'],
  ECONNRESET: ['reset', 'lost'],
  EPIPE: ['reset', 'lost'],
  ECONNABORTED: ['reset', 'lost'],
  UND_ERR_SOCKET: ['reset', 'lost'],
};

/** The `code` of an error (Node's or undici's), or undefined. */
export const codeOf = (error: unknown): string | undefined => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

const ruleOf = (error: unknown): (typeof byCode)[string] | undefined => {
  const code = codeOf(error);
  return code === undefined ? undefined : byCode[code];
};

/** True when the error says the upstream address could not be connected to. */
export function isUnreachable(error: unknown): boolean {
  return ruleOf(error)?.[1] === 'unreachable';
}

/** True when the error says the connection was lost, e.g. reset, not that the upstream was slow or answered badly. */
export function isConnectionLost(error: unknown): boolean {
  return ruleOf(error)?.[1] === 'lost';
}

/** The kind of a failed upstream call from its error's code; `bad_status` is the caller's to tell. */
export function upstreamErrorKind(error: unknown): UpstreamErrorKind {
  return ruleOf(error)?.[0] ?? 'other';
}

const kinds: readonly UpstreamErrorKind[] = ['refused', 'timeout', 'reset', 'bad_status', 'other'];
const counters = new WeakMap<Registry, Counter<'kind'>>();

/**
 * Counts failed calls to the service's upstream by kind in `registry`: one counter per registry
 * however often this is called, so that every caller of a process adds to the same one. It appears
 * from the first call (services without an upstream do not show it), every kind at 0, so that a
 * rate() sees the first error.
 */
export function upstreamErrorCounter(registry: Registry): (kind: UpstreamErrorKind) => void {
  let counter = counters.get(registry);
  if (counter === undefined) {
    counter = new Counter({
      name: 'upstream_errors_total',
      help: 'Failed calls to the upstream (proxy: web; frontend: backend), by kind: refused, timeout, reset, bad_status (5xx), other',
      labelNames: ['kind'],
      registers: [registry],
    });
    for (const kind of kinds) counter.inc({ kind }, 0);
    counters.set(registry, counter);
  }
  const found = counter;
  return (kind) => found.inc({ kind });
}
