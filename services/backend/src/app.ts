import { createServer, type Logger } from '@svc/kit';
import { addUserRoutes, databaseStatus, type UserStore } from '@svc/users';
import type { FastifyInstance } from 'fastify';

export interface BackendAppOptions {
  logger: Logger | false;
  /** The users' store; the app closes it when it closes. */
  store: UserStore;
}

const healthSchema = {
  type: 'object',
  properties: {
    status: { type: 'string' },
    service: { type: 'string' },
    database: { type: 'string', enum: ['connected', 'disconnected'] },
  },
  required: ['status', 'service', 'database'],
} as const;

/** Backend of variant C (spec 4.3): health with database connectivity and the user list; no create. */
export function createBackendApp(options: BackendAppOptions): FastifyInstance {
  const { store } = options;
  const app = createServer({ logger: options.logger });
  app.addHook('onClose', () => store.close());

  app.get('/health', { schema: { response: { 200: healthSchema } } }, async () => ({
    status: 'healthy',
    service: 'backend',
    database: await databaseStatus(store),
  }));

  addUserRoutes(app, store, { create: false });
  return app;
}
