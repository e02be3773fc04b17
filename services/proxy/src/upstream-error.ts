import { HttpError } from '@svc/kit';

/** undici's codes for an upstream that took too long: to connect, to answer, or between two reads. */
const timeoutCodes = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/**
 * The address cannot be reached at all: nothing listens there (refused), no route or host,
 * or the connection did not open in time. Such an address is skipped for a while.
 */
const unreachableCodes = new Set([
  'ECONNREFUSED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EHOSTDOWN',
  'ENETDOWN',
  'EADDRNOTAVAIL',
  'ETIMEDOUT',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** The connection broke or the upstream closed it (undici: "other side closed") before any answer. */
const connectionLostCodes = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET']);

const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

/** True when the error says the upstream address could not be connected to. */
export function isUnreachable(error: unknown): boolean {
  const code = codeOf(error);
  return typeof code === 'string' && unreachableCodes.has(code);
}

/** True when the error says the connection was lost, e.g. reset, not that the upstream was slow or answered badly. */
export function isConnectionLost(error: unknown): boolean {
  const code = codeOf(error);
  return typeof code === 'string' && connectionLostCodes.has(code);
}

/**
 * The client's answer when the upstream call failed before a response began: 504 when it
 * timed out, 502 for everything else (refused, reset, closed early, unresolvable host,
 * unparsable response). The same texts as the nginx config's error pages.
 */
export function upstreamFailure(error: unknown): HttpError {
  if (error instanceof HttpError) return error; // our own, e.g. 413 from the body limit
  const code = codeOf(error);
  const failure =
    typeof code === 'string' && timeoutCodes.has(code)
      ? new HttpError(504, 'Gateway timeout: upstream did not answer in time')
      : new HttpError(502, 'Bad gateway: upstream unavailable');
  // The log shows why (ECONNREFUSED, a timeout...); the client sees only the message.
  failure.cause = error;
  return failure;
}
