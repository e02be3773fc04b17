/**
 * OpenTelemetry's Node SDK, configured by the standard OTEL_* variables (exporter and its protocol,
 * sampler, batch processor, resource), with the instrumentations of what the services use: Node's
 * HTTP server, undici (the proxy's relay, the frontend's calls), pg, pino (trace_id and span_id in
 * every log line) and Fastify (@fastify/otel: spans named after their route). Imported by index.ts
 * only when traces are exported.
 */
import { subscribe } from 'node:diagnostics_channel';
import { register } from 'node:module';
import { setTimeout as sleep } from 'node:timers/promises';
import { propagation } from '@opentelemetry/api';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { PinoInstrumentation } from '@opentelemetry/instrumentation-pino';
import { UndiciInstrumentation, type UndiciRequest } from '@opentelemetry/instrumentation-undici';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { FastifyOtelInstrumentation } from '@fastify/otel';
import type { FastifyInstance } from 'fastify';
import { createAddHookMessageChannel } from 'import-in-the-middle';
import { traceSqliteStatements } from './sqlite-spans.js';

// The ES module loader hook of OpenTelemetry's ESM docs, registered here (module.register) rather than
// by a --experimental-loader flag, which would load it with tracing off too; it hooks only the modules
// the instrumentations name.
const { registerOptions, waitForAllMessagesAcknowledged } = createAddHookMessageChannel();
register('@opentelemetry/instrumentation/hook.mjs', import.meta.url, registerOptions);

// Traces only, unless these say otherwise: the services serve their metrics on /metrics and write their logs
// themselves. The SDK says its errors (an export the collector refused) on stderr only with a level set.
process.env.OTEL_METRICS_EXPORTER ??= 'none';
process.env.OTEL_LOGS_EXPORTER ??= 'none';
process.env.OTEL_LOG_LEVEL ??= 'error';

/**
 * The proxy relays its client's traceparent (and tracestate, baggage); undici's instrumentation adds
 * its own, which must replace them (W3C Trace Context: one traceparent a request), not sit beside them.
 * Hand-written: the instrumentation only appends (its requestHook runs before it does).
 */
function dropRelayedPropagation(_span: unknown, request: UndiciRequest): void {
  const { headers } = request;
  if (!Array.isArray(headers)) return;
  const fields = propagation.fields();
  for (let i = headers.length - 2; i >= 0; i -= 2) {
    const name = headers[i];
    if (typeof name === 'string' && fields.includes(name.toLowerCase())) headers.splice(i, 2);
  }
}

const sdk = new NodeSDK({
  instrumentations: [
    new HttpInstrumentation(),
    new UndiciInstrumentation({ requestHook: dropRelayedPropagation }),
    // A statement outside any request (the schema's creation at start-up) gets no trace of its own.
    new PgInstrumentation({ requireParentSpan: true }),
    // The lines stay where the service writes them (stdout, LOG_DIR), now with the trace's ids.
    new PinoInstrumentation({ disableLogSending: true }),
    // One span per request under the HTTP server's, which it names after the route; no span per hook (the kit's
    // bookkeeping: CORS, request id, metrics) or handler (named after its plugin's source text, and as long as the request's).
    new FastifyOtelInstrumentation({ registerOnInitialization: true, instrumentHooks: false, instrumentHandler: false }),
  ],
});
sdk.start();
traceSqliteStatements();

/** The longest the exit waits for the spans still buffered: a live collector takes them in milliseconds. */
const FLUSH_LIMIT_MS = 2_000;

// sdk-node leaves its shutdown to the app (its README): it is done in the app's onClose, which runs
// once the last request has been answered. Hand-written: no package ties the SDK to Fastify's close.
subscribe('fastify.initialization', (message) => {
  const { fastify } = message as { fastify: FastifyInstance };
  fastify.addHook('onClose', async (instance) => {
    const late = sleep(FLUSH_LIMIT_MS, 'late', { ref: false });
    const outcome = await Promise.race([
      sdk.shutdown().then(
        () => 'flushed',
        (error: unknown) => error,
      ),
      late,
    ]);
    if (outcome === 'late') {
      instance.log.warn(`the spans still buffered were dropped: the collector did not take them within ${FLUSH_LIMIT_MS} ms`);
    } else if (outcome !== 'flushed') {
      instance.log.warn({ err: outcome }, 'the spans still buffered were dropped: the collector refused them');
    }
  });
});

await waitForAllMessagesAcknowledged();
