import type { IncomingMessage } from 'node:http';
import type { Http2ServerRequest } from 'node:http2';
import { Transform, type Readable, type TransformCallback } from 'node:stream';
import { HttpError } from '@sample-services/kit/errors';

/** The same words the kit's services use for Fastify's own 413. */
export const bodyTooLarge = (): HttpError => new HttpError(413, 'Request body is too large');

/** Passes the body on and fails with 413 once it grows past the limit. */
class SizeLimit extends Transform {
  private seen = 0;
  constructor(private readonly limit: number) {
    super();
  }
  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.seen += chunk.length;
    if (this.seen > this.limit) callback(bodyTooLarge());
    else callback(null, chunk);
  }
}

/**
 * The request body as a stream for the upstream, never buffered, or undefined when the
 * request has none. A declared length over the limit is refused before the upstream is
 * contacted (as nginx's client_max_body_size); a chunked body is counted as it flows.
 * The client's stream is piped, not handed over, so that undici destroying the body on
 * an upstream failure does not destroy the client's socket before it gets its answer.
 * Over HTTP/2 a body needs no length: there is none when the stream ended with its headers.
 */
export function upstreamRequestBody(request: IncomingMessage, limit: number): Readable | undefined {
  const length = request.headers['content-length'];
  if (length !== undefined) {
    if (Number(length) > limit) throw bodyTooLarge();
    if (length === '0') return undefined;
  } else if (request.httpVersionMajor === 2) {
    // Node's HTTP/2 compatibility request, as the app's server hands it over TLS with h2.
    if ((request as unknown as Http2ServerRequest).stream.endAfterHeaders) return undefined;
  } else if (request.headers['transfer-encoding'] === undefined) {
    return undefined;
  }
  return request.pipe(new SizeLimit(limit));
}

/**
 * Reads and drops what is left of a body the upstream will not get, so that the client
 * receives the error answer and its keep-alive connection stays usable (nginx's lingering
 * close; the kit's request timeout bounds a client that never stops sending).
 */
export function discardRequestBody(request: IncomingMessage): void {
  if (request.complete) return;
  request.unpipe();
  request.resume();
}
