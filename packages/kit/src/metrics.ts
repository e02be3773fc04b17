/**
 * prom-client metrics observed in Fastify's hooks: requests by method, route template and status (bounded
 * series), those in flight, a service's own, and the process's. Each app has its own registry, so tests build
 * as many as they like; the process's metrics are one registry, filled on the first scrape: prom-client's
 * collector starts an event-loop monitor and a GC observer that never stop, which one per app would pile up.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import { Type } from 'typebox';
import { sendUnchecked } from './server.js';

export const metricsContentType = Registry.PROMETHEUS_CONTENT_TYPE;

/** Shown by every app's /metrics: the process's metrics, and what a package counts process-wide (the upstream errors). */
export const processRegistry = new Registry();

export interface AppMetrics {
  /** Where a service registers its own metrics (prom-client's `registers`). */
  readonly registry: Registry;
}

const byApp = new WeakMap<FastifyInstance, AppMetrics>();

/** The app's metrics, made on first use, for the kit's plugins and a service that adds its own (see meterStore). */
export function metricsOf(app: FastifyInstance): AppMetrics {
  const metrics = byApp.get(app) ?? { registry: new Registry() };
  byApp.set(app, metrics);
  return metrics;
}

/** A request no route took (404, 405, malformed URL) is one series, whatever its path; the scrape is not counted. */
const routeOf = (request: FastifyRequest): string => (request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched'));
const counted = (request: FastifyRequest): boolean => routeOf(request) !== '/metrics';

/** The request meters of a registry, made once: apps that share a registry (shareMetrics) count into the same series. */
interface RequestMeters {
  inFlight: number;
  requests: Counter<'method' | 'route' | 'status_code'>;
  durations: Histogram<'method' | 'route' | 'status_code'>;
}
const metersByRegistry = new WeakMap<Registry, RequestMeters>();

function requestMeters(registry: Registry): RequestMeters {
  const made = metersByRegistry.get(registry);
  if (made !== undefined) return made;
  const registers = [registry];
  const labelNames = ['method', 'route', 'status_code'] as const;
  const meters: RequestMeters = {
    inFlight: 0,
    requests: new Counter({
      name: 'http_requests_total',
      help: 'Requests answered, by method, route template and status code ("aborted": never finished)',
      labelNames,
      registers,
    }),
    durations: new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time from the request head to the end of the response, by method, route template and status code',
      labelNames,
      // From 1 ms: most answers here take well under 5 ms.
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers,
    }),
  };
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests received whose response has not ended yet (a scrape does not count itself)',
    registers,
    collect() {
      this.set(meters.inFlight);
    },
  });
  metersByRegistry.set(registry, meters);
  return meters;
}

/**
 * `app` counts its requests into `source`'s metrics, served wherever `source`'s are: one process serving
 * on two listeners (the proxy's HTTPS app beside its plain one). Before `app` registers countRequests.
 */
export function shareMetrics(app: FastifyInstance, source: FastifyInstance): void {
  byApp.set(app, metricsOf(source));
}

/** Counts the app's requests into its registry (metricsOf), in its hooks. */
export const countRequests = fp(async (app) => {
  const meters = requestMeters(metricsOf(app).registry);
  const { requests, durations } = meters;
  const labelsOf = (request: FastifyRequest, status: string) => ({ method: request.method, route: routeOf(request), status_code: status });

  app.addHook('onRequest', (request, _reply, done) => {
    if (counted(request)) meters.inFlight++;
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (counted(request)) {
      meters.inFlight--;
      const labels = labelsOf(request, String(reply.statusCode));
      requests.inc(labels);
      durations.observe(labels, reply.elapsedTime / 1000);
    }
    done();
  });
  // A client that went away before its answer ended: onResponse never runs for it, and it has no duration.
  app.addHook('onRequestAbort', (request, done) => {
    if (counted(request)) {
      meters.inFlight--;
      requests.inc(labelsOf(request, 'aborted'));
    }
    done();
  });
});

/** The whole scrape: the process's metrics, then the app's. */
export async function metricsText(metrics: AppMetrics): Promise<string> {
  if (processRegistry.getSingleMetric('process_cpu_seconds_total') === undefined) collectDefaultMetrics({ register: processRegistry });
  const [processText, appText] = await Promise.all([processRegistry.metrics(), metrics.registry.metrics()]);
  return `${processText}\n${appText}`;
}

const schema = {
  summary: 'Metrics in the Prometheus text format: requests by route template and status, in flight, process, event loop',
  tags: ['metrics'],
  response: {
    200: { description: 'Prometheus text format 0.0.4; not counted itself', content: { 'text/plain': { schema: Type.String() } } },
  },
};

/** GET /metrics: the app's metrics (countRequests, a service's own) and the process's. */
export const metricsRoute = fp(async (app) => {
  app.get('/metrics', { schema }, async (_request, reply) => {
    const text = await metricsText(metricsOf(app));
    sendUnchecked(reply.type(metricsContentType), text); // text, as its content type says
    return reply;
  });
});
