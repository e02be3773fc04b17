import { createServer, errorSchema, type Logger } from '@svc/kit';
import type { FastifyInstance } from 'fastify';
import type { BackendClient } from './backend-client.js';

export interface FrontendAppOptions {
  logger: Logger | false;
  /** Where the users come from; the app closes it when it closes. */
  backend: BackendClient;
}

const healthSchema = {
  type: 'object',
  properties: { status: { type: 'string' }, service: { type: 'string' } },
  required: ['status', 'service'],
} as const;

/** Frontend of variant C (spec 4.3): its own health, and the user list forwarded from the backend. */
export function createFrontendApp(options: FrontendAppOptions): FastifyInstance {
  const { backend } = options;
  const app = createServer({ logger: options.logger });
  app.addHook('onClose', () => backend.close());

  app.get('/health', { schema: { response: { 200: healthSchema } } }, async () => ({ status: 'healthy', service: 'frontend' }));

  // The backend's JSON is passed on as it came (checked, not re-serialized).
  app.get('/api/users', { schema: { response: { 500: errorSchema } } }, async (request, reply) => {
    let users: string;
    try {
      users = await backend.fetchUsers();
    } catch (error) {
      request.log.error({ err: error }, 'could not fetch users from the backend');
      return reply.code(500).send({ error: 'Failed to fetch users' });
    }
    return reply.type('application/json; charset=utf-8').send(users);
  });

  return app;
}
