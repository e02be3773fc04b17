import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { answerError, HttpError } from '@svc/kit';
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher } from 'undici';
import { upstreamErrorKind } from '@svc/upstream';
import { clientResponseHeaders, declaredLength } from './headers.js';
import { discardRequestBody } from './request-body.js';
import { countUpstreamError, upstreamFailure } from './upstream-error.js';

/** What goes to the upstream: its origin, the client's method and path, the headers set for the upstream, the body stream. */
export type UpstreamRequest = Dispatcher.DispatchOptions & { origin: URL; body: Readable | undefined };

const relayKey = Symbol('relay');
type RelayedResponse = ServerResponse & { [relayKey]?: ResponseRelay };

function clientClosed(this: RelayedResponse): void {
  this[relayKey]?.clientClosed();
}

/**
 * Writes the upstream's response straight onto the client's, chunk by chunk, with
 * backpressure both ways (undici pauses reading the upstream while the client is slow).
 * This costs far less per request than a Readable piped through Fastify's reply, and the
 * upstream request is ended when the client goes away, as nginx does. The last chunk of a body
 * of declared length goes out with the end of the response: one write, none scheduled after it.
 * When the upstream fails before the response began, the client gets a JSON error (502,
 * 504, or 413 from the body limit); after that, the only honest signal is a cut connection.
 * Before that JSON error, the dispatcher has sent the request to another address when it could
 * (nextUpstream, in @svc/upstream).
 */
export class ResponseRelay implements Dispatcher.DispatchHandler {
  /** undici's control of the current attempt (abort, pause, resume), given just before the request is written; undefined before. */
  private controller: Dispatcher.DispatchController | undefined;
  /** Body bytes still to come when the upstream declared a Content-Length; NaN without one. */
  private remaining = NaN;

  constructor(
    private readonly response: ServerResponse,
    private readonly upstream: Dispatcher,
    private readonly request: UpstreamRequest,
    private readonly requestId: string,
    /** True once the app is closing: the client's connection then closes after this answer. */
    private readonly closing: () => boolean,
    private readonly log: FastifyBaseLogger,
  ) {
    // A module-level listener, not a closure per request ('close' comes once: no `once` wrapper either).
    (this.response as RelayedResponse)[relayKey] = this;
    this.response.on('close', clientClosed);
  }

  start(): void {
    this.upstream.dispatch(this.request, this);
  }

  /** The client's connection closed: ends the upstream request unless the response was all written. */
  clientClosed(): void {
    if (!this.response.writableFinished) this.controller?.abort(new Error('client closed the connection'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, upstreamHeaders: IncomingHttpHeaders): void {
    // Informational answers (103 Early Hints) are dropped, as nginx drops them.
    if (statusCode < 200) return;
    if (statusCode >= 500) countUpstreamError('bad_status');
    // The object undici always parses (reading controller.rawHeaders again would decode every header twice).
    const headers = clientResponseHeaders(upstreamHeaders, this.requestId);
    if (this.closing()) headers.push('connection', 'close');
    this.remaining = declaredLength(headers);
    this.response.writeHead(statusCode, headers);
  }

  /** Pauses the upstream's response until the client's socket drains. */
  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if ((this.remaining -= chunk.length) === 0) this.response.end(chunk);
    else if (!this.response.write(chunk)) {
      controller.pause();
      this.response.once('drain', () => controller.resume());
    }
  }

  onResponseEnd(): void {
    if (!this.response.writableEnded) this.response.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    // The last attempt's failure (the dispatcher counts those it sent again); not the client going away, nor a body over our limit.
    if (!this.response.destroyed && !(error instanceof HttpError)) countUpstreamError(upstreamErrorKind(error));
    if (this.response.headersSent) this.response.destroy(error);
    else if (!this.response.destroyed) {
      discardRequestBody(this.response.req);
      answerError(this.response, upstreamFailure(error), this.log);
    }
  }
}
