import { HttpError } from '@svc/kit';
import { upstreamErrorKind } from '@svc/upstream';

/**
 * The client's answer when the upstream call failed before a response began: 504 when it
 * timed out (to connect, to answer, or between two reads), 502 for everything else (refused,
 * reset, closed early, unresolvable host, unparsable response). The same texts as the nginx
 * config's error pages.
 */
export function upstreamFailure(error: unknown): HttpError {
  if (error instanceof HttpError) return error; // our own, e.g. 413 from the body limit
  const failure =
    upstreamErrorKind(error) === 'timeout'
      ? new HttpError(504, 'Gateway timeout: upstream did not answer in time')
      : new HttpError(502, 'Bad gateway: upstream unavailable');
  // The log shows why (ECONNREFUSED, a timeout...); the client sees only the message.
  failure.cause = error;
  return failure;
}
