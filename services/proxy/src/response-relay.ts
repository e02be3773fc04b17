import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { answerError } from '@sample-services/kit/server';
import { HttpError } from '@sample-services/kit/errors';
import { processRegistry } from '@sample-services/kit/metrics';
import type { FastifyBaseLogger } from 'fastify';
import type { Dispatcher } from 'undici';
import { clientResponseHeaders, declaredLength } from './headers.js';
import { discardRequestBody } from './request-body.js';
import { isConnectionLost, isUnreachable, upstreamErrorCounter, upstreamErrorKind } from '@sample-services/upstream/upstream-errors';
import type { UpstreamAddress, UpstreamAddresses } from '@sample-services/upstream/upstream-addresses';
import { upstreamFailure } from './upstream-error.js';

/** Failed upstream calls by kind, in the proxy's /metrics (METRICS_PORT). */
const countUpstreamError = upstreamErrorCounter(processRegistry);

/** RFC 9110's idempotent methods: sending one twice does no more than sending it once. */
const idempotent = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

/** What goes to the upstream; the same object for every attempt. */
export type UpstreamRequest = Dispatcher.DispatchOptions & { body: Readable | undefined };

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
 *
 * Before that JSON error, the request goes to another address of the upstream (nginx's
 * `proxy_next_upstream error timeout`) when that cannot do it twice: no response byte came,
 * no body byte was read, and either the request never went out (refused, unreachable,
 * connect timeout, or its connection lost before it was written: any method), or it is
 * idempotent and its connection was lost before any answer (a reset, the upstream closing).
 * With no other address left, a lost connection is tried once more on the same one, as nginx
 * retries what a kept-alive connection lost: the upstream may close one just as it is reused.
 * Hand-written: `@fastify/reply-from` cost more CPU per request and cannot retry on another address (docs/architecture.md).
 */
export class ResponseRelay implements Dispatcher.DispatchHandler {
  /** undici's control of the current attempt (abort, pause, resume), given just before the request is written; undefined before. */
  private controller: Dispatcher.DispatchController | undefined;
  private target: UpstreamAddress | undefined;
  /** undici calls onRequestStart on a connected socket just before it writes the request: until then it was never sent. */
  private sent = false;
  /** An answer began upstream (a 1xx included): never sent again from here on. */
  private answered = false;
  /** Addresses this request failed on; only a failure allocates it. */
  private tried: UpstreamAddress[] | undefined;
  /** Body bytes still to come when the upstream declared a Content-Length; NaN without one. */
  private remaining = NaN;

  constructor(
    private readonly response: ServerResponse,
    private readonly upstream: UpstreamAddresses,
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

  /** Sends the request to the next address in turn. */
  start(): void {
    const target = this.upstream.pick();
    if (target === undefined) {
      countUpstreamError(upstreamErrorKind(this.upstream.noAddressError)); // e.g. the name does not resolve
      this.fail(this.upstream.noAddressError);
    } else this.send(target);
  }

  private send(target: UpstreamAddress): void {
    this.target = target;
    this.sent = false;
    this.controller = undefined;
    target.pool.dispatch(this.request, this);
  }

  /** The client's connection closed: ends the upstream request unless the response was all written. */
  clientClosed(): void {
    if (!this.response.writableFinished) this.controller?.abort(new Error('client closed the connection'));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    this.sent = true;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, upstreamHeaders: IncomingHttpHeaders): void {
    this.answered = true;
    // Informational answers (103 Early Hints) are dropped, as nginx drops them.
    if (statusCode < 200) return;
    if (statusCode >= 500) countUpstreamError('bad_status');
    // The object undici always parses (reading controller.rawHeaders again would decode every header twice).
    const headers = clientResponseHeaders(upstreamHeaders, this.requestId);
    // HTTP/2 has no Connection header: its server closes a session with GOAWAY.
    if (this.closing() && this.response.req.httpVersionMajor < 2) headers.push('connection', 'close');
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
    // Every failed attempt counts, retried or not; not the client going away, nor a body over our limit.
    if (!this.response.destroyed && !(error instanceof HttpError)) countUpstreamError(upstreamErrorKind(error));
    if (this.response.headersSent) this.response.destroy(error);
    else if (!this.response.destroyed && !this.retried(error)) this.fail(error);
  }

  private fail(error: unknown): void {
    discardRequestBody(this.response.req);
    answerError(this.response, upstreamFailure(error), this.log, this.requestId);
  }

  /** Sends the request to another address when that is safe (see the class); true when it did. */
  private retried(error: Error): boolean {
    const target = this.target;
    if (this.answered || target === undefined) return false;
    // A body that was read, even in part, is gone (and an errored one, e.g. over the limit, is the answer).
    const body = this.request.body;
    if (body !== undefined && (body.readableDidRead || body.destroyed)) return false;
    if (!this.sent) {
      if (isUnreachable(error)) this.upstream.skip(target, error);
      else if (!isConnectionLost(error)) return false;
    } else if (!(idempotent.has(this.request.method) && isConnectionLost(error))) {
      return false;
    }
    const tried = (this.tried ??= []);
    tried.push(target);
    const next =
      this.upstream.another(tried) ?? (isConnectionLost(error) && tried.indexOf(target) === tried.length - 1 ? target : undefined);
    if (next === undefined) return false;
    this.send(next);
    return true;
  }
}
