/**
 * Request count and duration by method, route template and status code, as prom-client's own
 * Counter and Histogram, observed in Fastify's hooks. Routes are templates (`/api/users/:id`), so
 * the number of series is bounded by routes x methods x status codes.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

const labelNames = ['method', 'route', 'status_code'] as const;

/** The route label of a request no route took (404, 405, malformed URL), whatever its path. */
const UNMATCHED = 'unmatched';

/** The scrape itself is left out of what it reports. */
const uncounted = new Set(['/metrics']);

const routeOf = (request: FastifyRequest): string => (request.is404 ? UNMATCHED : (request.routeOptions.url ?? UNMATCHED));

/** Registers the request metrics in `registry` and the hooks that observe them on `app`. */
export function observeRequests(app: FastifyInstance, registry: Registry): void {
  let inFlight = 0;
  new Gauge({
    name: 'http_requests_in_flight',
    help: 'Requests received whose response has not ended yet (a scrape does not count itself)',
    registers: [registry],
    collect() {
      this.set(inFlight);
    },
  });
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
    if (!uncounted.has(routeOf(request))) inFlight++;
    done();
  });
  app.addHook('onResponse', (request, reply, done) => {
    if (!uncounted.has(routeOf(request))) {
      inFlight--;
      const labels = labelsOf(request, String(reply.statusCode));
      requests.inc(labels);
      durations.observe(labels, reply.elapsedTime / 1000);
    }
    done();
  });
  // A client that went away before its answer ended: onResponse never runs for it, and it has no duration to observe.
  app.addHook('onRequestAbort', (request, done) => {
    if (!uncounted.has(routeOf(request))) {
      inFlight--;
      requests.inc(labelsOf(request, 'aborted'));
    }
    done();
  });
}
