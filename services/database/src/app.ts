import { createServer, type Logger } from '@svc/kit';
import { addUserRoutes, databaseStatus, type UserStore } from '@svc/users';
import type { FastifyInstance } from 'fastify';

export interface DatabaseAppOptions {
  logger: Logger | false;
  /** The users' store; the app closes it when it closes. */
  store: UserStore;
}

const greetingSchema = {
  type: 'object',
  properties: { message: { type: 'string' }, timestamp: { type: 'string' } },
  required: ['message', 'timestamp'],
} as const;

const healthSchema = {
  type: 'object',
  properties: { status: { type: 'string' }, database: { type: 'string', enum: ['connected', 'disconnected'] } },
  required: ['status', 'database'],
} as const;

/** Variant B (spec 4.2): greeting, health with database connectivity, list and create users. */
export function createDatabaseApp(options: DatabaseAppOptions): FastifyInstance {
  const { store } = options;
  const app = createServer({ logger: options.logger });
  app.addHook('onClose', () => store.close());

  app.get('/', { schema: { response: { 200: greetingSchema } } }, async () => ({
    message: 'Hello from Flask Docker App!',
    timestamp: new Date().toISOString(),
  }));

  // Always 200 while the process serves: the database's state is reported, not propagated.
  app.get('/health', { schema: { response: { 200: healthSchema } } }, async () => ({
    status: 'healthy',
    database: await databaseStatus(store),
  }));

  addUserRoutes(app, store, { create: true });
  return app;
}
