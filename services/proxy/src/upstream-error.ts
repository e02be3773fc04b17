import { HttpError } from '@svc/kit';

/** undici's codes for an upstream that took too long: to connect, to answer, or between two reads. */
const timeoutCodes = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

const codeOf = (error: unknown): unknown => (error as { code?: unknown } | null)?.code;

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
