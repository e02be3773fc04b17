/**
 * OpenTelemetry traces (docs/observability-traces.md). This module imports nothing of OpenTelemetry:
 * the SDK (tracing-sdk.ts) is imported only by startTracing, which runService calls only when an
 * OTLP endpoint is set (OTEL_EXPORTER_OTLP_ENDPOINT or _TRACES_ENDPOINT, OTEL_SDK_DISABLED not
 * true). Until then `activeTracer` is undefined and every function here costs one check of it.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from './logger.js';
import type { TracingConfig } from './tracing-config.js';

/** The client span of an outgoing HTTP call. */
export interface OutgoingSpan {
  /** Ends the span with the answer's status (HTTP), or the error that ended the call. */
  end(outcome?: { status?: number; error?: unknown }): void;
}

/** An outgoing request's headers: an object, or a flat [name, value, ...] list (head.ts), whose `traceparent` is replaced. */
export type OutgoingHeaders = Record<string, string> | string[];

/** A statement's summary, as OpenTelemetry's database conventions name it: never its parameters. */
export interface Statement {
  system: 'postgresql' | 'sqlite';
  /** `SELECT`, `INSERT`, `COPY`... */
  operation: string;
  /** The table, when there is one. */
  collection?: string;
}

/** What the kit and the services ask of the SDK once it is loaded (tracing-sdk.ts). */
export interface Tracer {
  /**
   * Runs `handle` with the request's server span active: a child of the request's `traceparent`
   * (and `tracestate`), or a new trace. The span ends on the response's 'close', once the last
   * byte is written (or the response is cut).
   */
  serve(request: IncomingMessage, response: ServerResponse, handle: () => void): void;
  /** Names the request's server span after the route template it was routed to. */
  route(request: IncomingMessage, route: string): void;
  /**
   * Sets a `traceparent` in `headers` for a call to `path` at `origin`, child of the active span: a
   * client span's, returned to be ended; undefined when the trace is sampled out (nothing to end).
   */
  outgoing(method: string, origin: URL, path: string, headers: OutgoingHeaders): OutgoingSpan | undefined;
  /** Runs a statement in a span, child of the active span; a statement outside any request gets none. */
  statement<T>(statement: Statement, run: () => T): T;
  /** trace_id and span_id of the active span, for the log line written now; an empty object outside one. */
  logFields(): Record<string, string>;
  /** Exports the spans still buffered and stops exporting; at once when the collector is known to be down. */
  shutdown(): Promise<void>;
}

let activeTracer: Tracer | undefined;

/** The tracer, once startTracing loaded the SDK; undefined with tracing off. */
export const tracer = (): Tracer | undefined => activeTracer;

/** Loads the SDK and starts exporting spans (only with `config.enabled`). */
export async function startTracing(config: TracingConfig, logger: Logger): Promise<void> {
  const { createTracer } = await import('./tracing-sdk.js');
  activeTracer = await createTracer(config, logger);
}

/** Stops tracing at exit (runService): the spans still buffered are exported first. */
export async function stopTracing(): Promise<void> {
  const stopped = activeTracer;
  activeTracer = undefined;
  await stopped?.shutdown();
}

/**
 * The fields of every log line (pino's mixin): the active span's trace_id and span_id. Given only
 * to the logger of a service whose tracing is enabled, so a service without it pays nothing per line.
 */
export const traceLogFields = (): Record<string, string> => activeTracer?.logFields() ?? {};

/** A client span for an outgoing HTTP call, its `traceparent` set in `headers`; undefined with tracing off or the trace sampled out. */
export const startOutgoingSpan = (method: string, origin: URL, path: string, headers: OutgoingHeaders): OutgoingSpan | undefined =>
  activeTracer?.outgoing(method, origin, path, headers);

/** Runs a database statement, in a span when tracing is on. */
export const traceStatement = <T>(statement: Statement, run: () => T): T =>
  activeTracer === undefined ? run() : activeTracer.statement(statement, run);
