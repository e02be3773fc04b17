import type { IncomingMessage } from 'node:http';
import { HttpError } from '@sample-services/kit/errors';

/**
 * A Host header as RFC 9110 allows it: a host name (RFC 3986's reg-name, without two dots in a
 * row, as nginx refuses them) or a bracketed IP literal, and an optional port. nginx refuses a
 * path separator or a control character in it with 400; an unclosed `[` too here, which the
 * upstream client would otherwise trip on.
 */
const wellFormedHost = /^(?:\[[0-9a-f:.]+\]|(?!.*\.\.)[\w\-.~%!$&'()*+,;=]+)(?::\d*)?$/i;

/** Host header lines of a request: Node keeps only the first in `headers`. */
function hostLines(rawHeaders: readonly string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i] as string;
    if (name.length === 4 && name.toLowerCase() === 'host') count += 1;
  }
  return count;
}

/**
 * Why nginx would refuse the request before proxying it, as an error with its status, or undefined
 * when it may go on: 400 for a malformed Host or more than one Host line, 501 for a
 * Transfer-Encoding other than chunked (nginx decodes no other, and passes none on).
 */
export function refusal(request: IncomingMessage): HttpError | undefined {
  const { host, 'transfer-encoding': transferEncoding } = request.headers;
  if (host !== undefined && host !== '' && !wellFormedHost.test(host)) return new HttpError(400, 'Bad request: malformed Host header');
  if (hostLines(request.rawHeaders) > 1) return new HttpError(400, 'Bad request: more than one Host header');
  if (transferEncoding !== undefined && transferEncoding.toLowerCase() !== 'chunked') {
    return new HttpError(501, 'Not implemented: a Transfer-Encoding other than chunked');
  }
  return undefined;
}
