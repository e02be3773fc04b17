import { HttpError } from '@sample-services/kit/errors';
import { upstreamErrorKind } from '@sample-services/upstream/upstream-errors';

/** The longest message of a cause kept for the log: an assertion's message quotes its source line, which a minified dependency writes as one long line. */
const LOGGED_MESSAGE_CHARS = 300;

/** The error itself when its message is short, else one of the same name, code and opening words, so a log line stays small. */
function boundedCause(error: unknown): unknown {
  if (!(error instanceof Error) || error.message.length <= LOGGED_MESSAGE_CHARS) return error;
  const { code } = error as { code?: unknown };
  const summary = new Error(`${error.message.slice(0, LOGGED_MESSAGE_CHARS)}...`);
  summary.name = typeof code === 'string' ? `${error.name} ${code}` : error.name;
  return summary;
}

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
  failure.cause = boundedCause(error);
  return failure;
}
