/**
 * What a copier adds to any Fastify app, shared by the idiomatic baselines: the request's id echoed
 * as X-Request-Id on every answer, and prom-client's Counter and Histogram observed in onResponse.
 */
import type { FastifyInstance } from 'fastify';
import { Counter, Histogram } from 'prom-client';

export function addRequestIdsAndMetrics(app: FastifyInstance): void {
  const labelNames = ['method', 'route', 'status_code'] as const;
  const requests = new Counter({ name: 'http_requests_total', help: 'Requests answered', labelNames });
  const durations = new Histogram({ name: 'http_request_duration_seconds', help: 'Request duration', labelNames });

  app.addHook('onSend', async (request, reply) => {
    void reply.header('x-request-id', request.id);
  });

  app.addHook('onResponse', async (request, reply) => {
    const labels = { method: request.method, route: request.routeOptions.url ?? 'unmatched', status_code: reply.statusCode };
    requests.inc(labels);
    durations.observe(labels, reply.elapsedTime / 1000);
  });
}
