import underPressure from '@fastify/under-pressure';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from './server.js';

/** A lag this long means every request already waits about as long: answering 503 at once is kinder. */
export const DEFAULT_MAX_EVENT_LOOP_DELAY_MS = 1_000;

/**
 * @fastify/under-pressure's answer while the event loop lags: the services' JSON error with a
 * Retry-After, and no log line (a shed request is the load itself, not an error to read one by one).
 */
function answerOverloaded(_request: FastifyRequest, reply: FastifyReply): void {
  void reply.code(503).header('retry-after', '1').send({ error: 'Service is overloaded; try again' });
}

/** Per-route config that lets a route through under pressure, as /health does (liveness, not load). */
export const servedUnderPressure = { pressureHandler: (): undefined => undefined };

/** Sheds load with @fastify/under-pressure while the event loop lags more than `maxEventLoopDelayMs`. */
export function shedLoad(app: App, maxEventLoopDelayMs: number): void {
  void app.register(underPressure, { maxEventLoopDelay: maxEventLoopDelayMs, pressureHandler: answerOverloaded });
}
