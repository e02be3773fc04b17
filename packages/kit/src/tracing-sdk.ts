/**
 * The OpenTelemetry SDK, imported by tracing.ts only when traces are exported: spans batched to an
 * OTLP/HTTP collector (protobuf, or JSON), W3C Trace Context in and out, the active span kept in
 * AsyncLocalStorage. Spans are hand-made where the kit and the stores know what happens (server,
 * outgoing call, statement): no auto-instrumentation patches a module.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import {
  context,
  defaultTextMapGetter,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Span,
  type TextMapSetter,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { ExportResultCode, W3CTraceContextPropagator, type ExportResult } from '@opentelemetry/core';
import { detectResources, envDetector, hostDetector, resourceFromAttributes, defaultResource } from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type ReadableSpan,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import {
  ATTR_DB_COLLECTION_NAME,
  ATTR_DB_OPERATION_NAME,
  ATTR_DB_QUERY_SUMMARY,
  ATTR_DB_SYSTEM_NAME,
  ATTR_ERROR_TYPE,
  ATTR_HTTP_REQUEST_METHOD,
  ATTR_HTTP_RESPONSE_STATUS_CODE,
  ATTR_HTTP_ROUTE,
  ATTR_SERVER_ADDRESS,
  ATTR_SERVER_PORT,
  ATTR_SERVICE_NAME,
  ATTR_URL_FULL,
  ATTR_URL_PATH,
  ATTR_URL_SCHEME,
} from '@opentelemetry/semantic-conventions';
import type { Logger } from './logger.js';
import { setInFlatList } from './flat-head.js';
import type { OutgoingHeaders, OutgoingSpan, Statement, Tracer } from './tracing.js';
import type { SamplerName, TracingConfig } from './tracing-config.js';

/** `db.system`: the name of the database conventions before db.system.name, which many backends still read. */
const ATTR_DB_SYSTEM = 'db.system';

function samplerOf(name: SamplerName, ratio: number): Sampler {
  const root = (): Sampler =>
    name.endsWith('always_on')
      ? new AlwaysOnSampler()
      : name.endsWith('always_off')
        ? new AlwaysOffSampler()
        : new TraceIdRatioBasedSampler(ratio);
  return name.startsWith('parentbased_') ? new ParentBasedSampler({ root: root() }) : root();
}

/**
 * The exporter, whose failures are logged once until an export succeeds again: a collector that
 * is down costs one line, not one per batch. Requests never wait on it (the batch processor exports
 * in the background and drops spans beyond its queue).
 */
class LoggedExporter implements SpanExporter {
  /** The last export failed: the collector is taken to be down until one succeeds. */
  failing = false;
  constructor(
    private readonly exporter: SpanExporter,
    private readonly logger: Logger,
  ) {}

  export(spans: ReadableSpan[], done: (result: ExportResult) => void): void {
    this.exporter.export(spans, (result) => {
      if (result.code === ExportResultCode.SUCCESS) {
        if (this.failing) this.logger.info('spans are exported again');
        this.failing = false;
      } else if (!this.failing) {
        this.failing = true;
        this.logger.warn(
          { err: result.error },
          'could not export spans (OTEL_EXPORTER_OTLP_ENDPOINT); they are dropped until the collector answers',
        );
      }
      done(result);
    });
  }

  shutdown(): Promise<void> {
    return this.exporter.shutdown();
  }

  forceFlush(): Promise<void> {
    return this.exporter.forceFlush?.() ?? Promise.resolve();
  }
}

async function exporterFor(config: TracingConfig): Promise<SpanExporter> {
  // The exporter reads its endpoint, headers, timeout and compression from the OTEL_EXPORTER_OTLP_* variables.
  // Both documented protocols stay: the two exporters are thin classes over the same OTLP packages,
  // and only the one chosen is loaded.
  if (config.protocol === 'http/json') return new (await import('@opentelemetry/exporter-trace-otlp-http')).OTLPTraceExporter();
  return new (await import('@opentelemetry/exporter-trace-otlp-proto')).OTLPTraceExporter();
}

const spanKey = Symbol('serverSpan');
type Spanned = IncomingMessage & { [spanKey]?: Span };

/** The server span ends with its response's 'close' (`this`): one listener for every response, no closure each. */
function endServerSpan(this: ServerResponse): void {
  const span = (this.req as Spanned)[spanKey];
  if (span === undefined) return;
  span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, this.statusCode);
  if (!this.writableFinished) span.setStatus({ code: SpanStatusCode.ERROR, message: 'the response was cut before its end' });
  else if (this.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  span.end();
}

function endWithError(span: Span, error: unknown): void {
  span.setAttribute(ATTR_ERROR_TYPE, error instanceof Error ? error.constructor.name : 'Error');
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
  span.end();
}

const noFields: Record<string, string> = {};

/** Sets a header in an object, or replaces it in a flat list (the proxy's, which holds the client's traceparent). */
const headerSetter: TextMapSetter<OutgoingHeaders> = {
  set: (headers, name, value) => (Array.isArray(headers) ? setInFlatList(headers, name, value) : (headers[name] = value)),
};

/** The SDK set up from the OTEL_* variables (tracing-config.ts), registered as OpenTelemetry's global. */
export async function createTracer(config: TracingConfig, logger: Logger): Promise<Tracer> {
  const resource = defaultResource()
    .merge(resourceFromAttributes({ [ATTR_SERVICE_NAME]: config.serviceName }))
    // OTEL_RESOURCE_ATTRIBUTES, and OTEL_SERVICE_NAME over it; host.name tells replicas apart.
    .merge(detectResources({ detectors: [envDetector, hostDetector] }));
  const exporter = new LoggedExporter(await exporterFor(config), logger);
  const provider = new TracerProvider({
    resource,
    sampler: samplerOf(config.sampler, config.samplerRatio),
    spanProcessors: [new BatchSpanProcessor({ exporter, ...config.batch })],
  });
  const propagator = new W3CTraceContextPropagator();
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(propagator);
  trace.setGlobalTracerProvider(provider);
  const tracer = provider.getTracer('@svc/kit');

  return {
    // A span sampled out (1% sampling: most of them) is only a context: it is given no attributes
    // and nothing ends it, but its traceparent (flag 00) still goes on, so downstream agrees.
    serve(request, response, handle) {
      const parent = propagator.extract(ROOT_CONTEXT, request.headers, defaultTextMapGetter);
      const method = request.method ?? 'GET';
      const span = tracer.startSpan(method, { kind: SpanKind.SERVER }, parent);
      if (span.isRecording()) {
        const url = request.url ?? '/';
        const query = url.indexOf('?');
        span.setAttributes({
          [ATTR_HTTP_REQUEST_METHOD]: method,
          [ATTR_URL_PATH]: query < 0 ? url : url.slice(0, query),
          [ATTR_URL_SCHEME]: 'http',
        });
        (request as Spanned)[spanKey] = span;
        response.once('close', endServerSpan);
      }
      context.with(trace.setSpan(parent, span), handle);
    },

    route(request, route) {
      const span = (request as Spanned)[spanKey];
      span?.setAttribute(ATTR_HTTP_ROUTE, route);
      span?.updateName(`${request.method ?? 'GET'} ${route}`);
    },

    outgoing(method, origin, path, headers): OutgoingSpan | undefined {
      const parent = context.active();
      const span = tracer.startSpan(method, { kind: SpanKind.CLIENT }, parent);
      propagator.inject(trace.setSpan(parent, span), headers, headerSetter);
      if (!span.isRecording()) return undefined;
      span.setAttributes({
        [ATTR_HTTP_REQUEST_METHOD]: method,
        [ATTR_URL_FULL]: `${origin.origin}${path}`,
        [ATTR_SERVER_ADDRESS]: origin.hostname,
        [ATTR_SERVER_PORT]: Number(origin.port || 80),
      });
      return {
        end({ status, error } = {}) {
          if (error !== undefined) return endWithError(span, error);
          if (status !== undefined) {
            span.setAttribute(ATTR_HTTP_RESPONSE_STATUS_CODE, status);
            if (status >= 400) span.setStatus({ code: SpanStatusCode.ERROR });
          }
          span.end();
        },
      };
    },

    statement<T>({ system, operation, collection }: Statement, run: () => T): T {
      const parent = context.active();
      // Outside a request, or in one sampled out: no span.
      if (trace.getSpan(parent)?.isRecording() !== true) return run();
      const summary = collection === undefined ? operation : `${operation} ${collection}`;
      const span = tracer.startSpan(
        summary,
        {
          kind: SpanKind.CLIENT,
          attributes: {
            [ATTR_DB_SYSTEM]: system,
            [ATTR_DB_SYSTEM_NAME]: system,
            [ATTR_DB_OPERATION_NAME]: operation,
            ...(collection !== undefined && { [ATTR_DB_COLLECTION_NAME]: collection }),
            [ATTR_DB_QUERY_SUMMARY]: summary,
          },
        },
        parent,
      );
      let result: T;
      try {
        result = run();
      } catch (error) {
        endWithError(span, error);
        throw error;
      }
      if (!(result instanceof Promise)) {
        span.end();
        return result;
      }
      return result.then(
        (value: unknown) => {
          span.end();
          return value;
        },
        (error: unknown) => {
          endWithError(span, error);
          throw error;
        },
      ) as T; // the same promise's value, once the span has ended
    },

    logFields() {
      const span = trace.getSpan(context.active());
      if (span === undefined) return noFields;
      const { traceId, spanId } = span.spanContext();
      return { trace_id: traceId, span_id: spanId };
    },

    // With the collector down (logged already) there is nothing to wait for; a failure of the last
    // export is the exporter's to log, once.
    shutdown: async () => {
      if (!exporter.failing) await provider.shutdown().catch(() => undefined);
    },
  };
}
