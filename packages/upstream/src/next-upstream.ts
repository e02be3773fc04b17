import type { IncomingHttpHeaders } from 'node:http';
import { Readable, type Duplex } from 'node:stream';
import type { Dispatcher } from 'undici';
import { isConnectionLost, isUnreachable } from './upstream-errors.js';

/** RFC 9110's idempotent methods: sending one twice does no more than sending it once. */
const idempotent = new Set(['GET', 'HEAD', 'OPTIONS', 'PUT', 'DELETE', 'TRACE']);

export interface NextUpstreamOptions {
  /** The origins of the upstream's addresses now, as the dns interceptor dispatches to them (`http://10.0.0.5:3000`). */
  origins: () => readonly string[];
  /** The most attempts of one request; default each address once and the last once more. */
  attempts?: number | undefined;
  /** Told the error of each attempt that is sent again (the last one's goes to the handler). */
  onRetry?: ((error: Error) => void) | undefined;
}

/**
 * nginx's `proxy_next_upstream error timeout` as an undici interceptor, composed under the dns
 * interceptor so that it sees the address each attempt went to. Hand-written because undici's retry
 * interceptor sends again through the dns interceptor's round robin, which may pick the address that
 * just failed, and its policy sees the error alone: not whether the request was written.
 *
 * A request goes to another address when that cannot do it twice: no response byte came, no body byte
 * was read, and either it never went out (refused, unreachable, connect timeout, or its connection lost
 * before it was written: any method), or it is idempotent and its connection was lost before any answer
 * (a reset, the upstream closing). With no address left untried, a lost connection is tried again on the
 * last one, as nginx retries what a kept-alive connection lost: the upstream may close one just as it is
 * reused.
 */
export function nextUpstream(options: NextUpstreamOptions): Dispatcher.DispatcherComposeInterceptor {
  return (dispatch) => (opts, handler) => dispatch(opts, new NextUpstreamHandler(dispatch, opts, handler, options));
}

const originOf = (origin: string | URL | undefined): string => (origin instanceof URL ? origin.origin : (origin ?? ''));

/** One request over its attempts: forwards every callback, and on a failure it may send the request again. */
class NextUpstreamHandler implements Dispatcher.DispatchHandler {
  /** undici calls onRequestStart on a connected socket just before it writes the request: until then it was never sent. */
  private sent = false;
  /** An answer began (a 1xx included): never sent again from here on. */
  private answered = false;
  /** Origins this request failed on; only a failure allocates it. */
  private tried: string[] | undefined;

  constructor(
    private readonly dispatch: Dispatcher.Dispatch,
    private opts: Dispatcher.DispatchOptions,
    private readonly handler: Dispatcher.DispatchHandler,
    private readonly options: NextUpstreamOptions,
  ) {}

  onRequestStart(controller: Dispatcher.DispatchController, context: unknown): void {
    this.sent = true;
    this.handler.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(controller: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders, socket: Duplex): void {
    this.handler.onRequestUpgrade?.(controller, statusCode, headers, socket);
  }

  onBodySent(chunk: Buffer): void {
    this.handler.onBodySent?.(chunk);
  }

  onRequestSent(): void {
    this.handler.onRequestSent?.();
  }

  onResponseStarted(): void {
    this.handler.onResponseStarted?.();
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
    statusMessage?: string,
  ): void {
    this.answered = true;
    this.handler.onResponseStart?.(controller, statusCode, headers, statusMessage);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.handler.onResponseData?.(controller, chunk);
  }

  onResponseEnd(controller: Dispatcher.DispatchController, trailers: IncomingHttpHeaders): void {
    this.handler.onResponseEnd?.(controller, trailers);
  }

  onResponseError(controller: Dispatcher.DispatchController, error: Error): void {
    const next = this.next(controller, error);
    if (next === undefined) {
      this.handler.onResponseError?.(controller, error);
      return;
    }
    this.options.onRetry?.(error);
    this.sent = false;
    // The same address again keeps the caller's origin as it was: the Agent's key for its pool.
    if (next !== originOf(this.opts.origin)) this.opts = { ...this.opts, origin: next };
    this.dispatch(this.opts, this);
  }

  /** The origin to send the request to next, or undefined when it must not be sent again. */
  private next(controller: Dispatcher.DispatchController | null, error: Error): string | undefined {
    // No controller yet when the connect failed; an aborted one is the caller giving up.
    if (this.answered || controller?.aborted === true) return undefined;
    // A body that was read, even in part, is gone (and an errored one, e.g. over a limit, is the answer).
    const { body } = this.opts;
    if (body instanceof Readable && (body.readableDidRead || body.destroyed)) return undefined;
    const lost = isConnectionLost(error);
    if (this.sent ? !(lost && idempotent.has(this.opts.method)) : !(lost || isUnreachable(error))) return undefined;
    const failed = originOf(this.opts.origin);
    const tried = (this.tried ??= []);
    tried.push(failed);
    const origins = this.options.origins();
    if (tried.length >= (this.options.attempts ?? origins.length + 1)) return undefined;
    return origins.find((origin) => !tried.includes(origin)) ?? (lost ? failed : undefined);
  }
}
