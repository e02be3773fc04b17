import underPressure from '@fastify/under-pressure';
import fp from 'fastify-plugin';

/** Per-route config that lets a route through under pressure, as /health does (liveness, not load). */
export const servedUnderPressure = { pressureHandler: (): undefined => undefined };

/**
 * Answers 503 with the JSON error and a Retry-After while the event loop lags more than maxEventLoopDelayMs
 * (default 1 s: every request already waits about as long), with no log line: a shed request is the load itself.
 */
export const loadShedding = fp<{ maxEventLoopDelayMs?: number }>(async (app, options) => {
  await app.register(underPressure, {
    maxEventLoopDelay: options.maxEventLoopDelayMs ?? 1_000,
    pressureHandler: (_request, reply) => {
      void reply.code(503).header('retry-after', '1').send({ error: 'Service is overloaded; try again' });
    },
  });
});
