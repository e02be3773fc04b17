import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { FastifyReply } from 'fastify';
import type { Dispatcher } from 'undici';
import { clientResponseHeaders } from './headers.js';
import { discardRequestBody } from './request-body.js';
import { upstreamFailure } from './upstream-error.js';

/**
 * Writes the upstream's response straight onto the client's, chunk by chunk, with
 * backpressure both ways (undici pauses reading the upstream while the client is slow).
 * This costs far less per request than a Readable piped through Fastify's reply, and the
 * dispatch controller ends the upstream request when the client goes away, as nginx does.
 * When the upstream fails before the response began, the client gets a JSON error (502,
 * 504, or 413 from the body limit); after that, the only honest signal is a cut connection.
 */
export class ResponseRelay implements Dispatcher.DispatchHandler {
  private readonly response: ServerResponse;
  private controller: Dispatcher.DispatchController | undefined;

  constructor(private readonly reply: FastifyReply) {
    this.response = reply.raw;
    this.response.once('close', this.clientClosed);
  }

  private readonly clientClosed = (): void => {
    if (!this.response.writableFinished) this.controller?.abort(new Error('client closed the connection'));
  };

  private readonly drained = (): void => this.controller?.resume();

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
  }

  onResponseStart(_controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    // Informational answers (103 Early Hints) are dropped, as nginx drops them.
    if (statusCode < 200) return;
    // From here on the response is ours, not Fastify's.
    this.reply.hijack();
    this.response.writeHead(statusCode, clientResponseHeaders(headers));
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.response.write(chunk)) return;
    controller.pause();
    this.response.once('drain', this.drained);
  }

  onResponseEnd(): void {
    this.response.end();
  }

  onResponseError(_controller: Dispatcher.DispatchController, error: Error): void {
    if (this.response.headersSent) this.response.destroy(error);
    else if (!this.response.destroyed) {
      discardRequestBody(this.reply.request.raw);
      void this.reply.send(upstreamFailure(error));
    }
  }
}
