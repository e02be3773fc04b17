import { createServer, errorAnswer, healthPlugin, sendUnchecked, type App, type Logger } from '@svc/kit';
import { services } from '@svc/manifest';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import type { BackendClient } from './backend-client.js';

export interface FrontendAppOptions {
  logger: Logger | false;
  /** Where the users come from; the app closes it when it closes. */
  backend: BackendClient;
}

const Health = Type.Object(
  { status: Type.Literal('healthy'), service: Type.Literal('frontend') },
  { examples: [{ status: 'healthy', service: 'frontend' }] },
);

const ForwardedUsers = Type.Array(Type.Unknown(), { description: "The backend's user list, byte for byte" });
const FetchFailed = errorAnswer('The backend failed: refused, timed out, answered non-2xx or not JSON', 'Failed to fetch users');

function userRoutes(backend: BackendClient): FastifyPluginCallbackTypebox {
  return (app, _options, done) => {
    // The backend's JSON is passed on as it came (checked, not re-serialized).
    const schema = { summary: "The backend's user list", tags: ['users'], response: { 200: ForwardedUsers, 500: FetchFailed } };
    app.get('/api/users', { schema }, async (request, reply) => {
      let users: string;
      try {
        users = await backend.fetchUsers();
      } catch (error) {
        request.log.error({ err: error }, 'could not fetch users from the backend');
        return reply.code(500).send({ error: 'Failed to fetch users' });
      }
      // JSON text, checked by the backend client: a list only as far as the backend says so.
      sendUnchecked(reply.type('application/json; charset=utf-8'), users);
      return reply;
    });
    done();
  };
}

/** Frontend of variant C (spec 4.3): its own health, and the user list forwarded from the backend. */
export function createFrontendApp(options: FrontendAppOptions): App {
  const { backend } = options;
  const app = createServer({ logger: options.logger, api: { title: 'frontend', description: services.frontend.summary } });
  app.addHook('onClose', () => backend.close());
  void app.register(healthPlugin({ schema: Health, report: () => ({ status: 'healthy' as const, service: 'frontend' as const }) }));
  void app.register(userRoutes(backend));
  return app;
}
