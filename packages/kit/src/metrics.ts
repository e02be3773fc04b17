/**
 * Metrics with prom-client, observed in Fastify's hooks: requests by method, route template and
 * status code (a Counter and a Histogram), those in flight, what a service adds (its store's pool),
 * and the process's own (prom-client's default metrics). Routes are templates (`/api/users/:id`),
 * so the series are bounded by routes x methods x status codes.
 *
 * Each app has its own registry, so tests build as many apps as they like. The process's metrics
 * are in one registry per process, filled on the first scrape: prom-client's collector starts an
 * event-loop monitor and a GC observer that never stop, which one per app would pile up.
 */
import type { FastifyRequest } from 'fastify';
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { App } from './server.js';

export const metricsContentType = Registry.PROMETHEUS_CONTENT_TYPE;

/** Shown by every app's /metrics: the process's metrics, and what a package counts process-wide (the upstream errors). */
export const processRegistry = new Registry();

export interface AppMetrics {
  /** Where a service registers its own metrics (the `registers` option of prom-client's metrics). */
  readonly registry: Registry;
}

const byApp = new WeakMap<object, AppMetrics>();

/** A request no route took (404, 405, malformed URL) is one series, whatever its path; the scrape is not counted. */
const routeOf = (request: FastifyRequest): string => (request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched'));
const counted = (request: FastifyRequest): boolean => routeOf(request) !== '/metrics';

/** Registers the app's request metrics in a registry of its own and observes them in its hooks. */
export function attachMetrics(app: App): AppMetrics {
  const registry = new Registry();
  let inFlight = 0;
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests received whose response has not ended yet (a scrape does not count itself)',
    registers: [registry],
    collect() {
      this.set(inFlight);
    },
  });
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({
    name: 'http_requests_total',
    help: 'Requests answered, by method, route template and status code ("aborted": never finished)',
    labelNames,
    registers: [registry],
  });
  const durations = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'Time from the request head to the end of the response, by method, route template and status code',
    labelNames,
    // From 1 ms: most answers here take well under 5 ms.
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
    registers: [registry],
  });
  const labelsOf = (request: FastifyRequest, status: string) => ({ method: request.method, route: routeOf(request), status_code: status });

  app.addHook('onRequest', (request, _reply, done) => {
    if (counted(request)) inFlight++;
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (counted(request)) {
      inFlight--;
      const labels = labelsOf(request, String(reply.statusCode));
      requests.inc(labels);
      durations.observe(labels, reply.elapsedTime / 1000);
    }
    done();
  });
  // A client that went away before its answer ended: onResponse never runs for it, and it has no duration.
  app.addHook('onRequestAbort', (request, done) => {
    if (counted(request)) {
      inFlight--;
      requests.inc(labelsOf(request, 'aborted'));
    }
    done();
  });
  const metrics = { registry };
  byApp.set(app, metrics);
  return metrics;
}

/** The app's metrics, for a service that adds its own (see poolMetrics, or prom-client with `registers`). */
export function metricsOf(app: App): AppMetrics {
  const metrics = byApp.get(app);
  if (metrics === undefined) throw new Error('metricsOf: not an app made by createServer, or one made with metrics: false');
  return metrics;
}

/** The whole scrape: the process's metrics, then the app's. */
export async function metricsText(metrics: AppMetrics): Promise<string> {
  if (processRegistry.getSingleMetric('process_cpu_seconds_total') === undefined) collectDefaultMetrics({ register: processRegistry });
  const [processText, appText] = await Promise.all([processRegistry.metrics(), metrics.registry.metrics()]);
  return `${processText}\n${appText}`;
}
