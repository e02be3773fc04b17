import { apiDocs } from '@sample-services/kit/openapi';
import { cors } from '@sample-services/kit/cors';
import { countRequests, metricsRoute } from '@sample-services/kit/metrics';
import { createServer, type App } from '@sample-services/kit/server';
import { healthPlugin } from '@sample-services/kit/health';
import { loadShedding } from '@sample-services/kit/load-shedding';
import { readyPlugin } from '@sample-services/kit/ready';
import type { Logger } from '@sample-services/kit/logger';
import { service } from './service.js';
import { createUserPlugin, databaseReady, databaseStatus, DatabaseStatus, listUsersPlugin } from '@sample-services/users/routes';
import { DuplicateEmailError, type UserStore } from '@sample-services/users/user-store';
import { meterStore } from '@sample-services/users/store-metrics';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';

export interface DatabaseAppOptions {
  logger: Logger | false;
  /** The users' store; the app closes it when it closes. */
  store: UserStore;
}

const Greeting = Type.Object(
  { message: Type.String(), timestamp: Type.String({ description: 'ISO 8601, now' }) },
  { examples: [{ message: 'Hello from Flask Docker App!', timestamp: '2026-11-22T10:15:30.123Z' }] },
);

const Health = Type.Object(
  { status: Type.Literal('healthy'), database: DatabaseStatus },
  { examples: [{ status: 'healthy', database: 'connected' }] },
);

const greetingRoutes: FastifyPluginCallbackTypebox = (app, _options, done) => {
  app.get('/', { schema: { summary: 'Greeting', response: { 200: Greeting } } }, async () => ({
    message: 'Hello from Flask Docker App!',
    timestamp: new Date().toISOString(),
  }));
  done();
};

/** Variant B (spec 4.2): greeting, health with database connectivity, list and create users. */
export function createDatabaseApp(options: DatabaseAppOptions): App {
  const { store: unmetered } = options;
  const app = createServer({ logger: options.logger, api: { title: 'database', description: service.summary } });
  void app.register(cors).register(apiDocs).register(countRequests).register(metricsRoute).register(loadShedding);
  app.addHook('onClose', () => unmetered.close());
  // Counted in /metrics: the pool's state and failed queries (a taken email is not a failure).
  const store = meterStore(app, unmetered, (error) => !(error instanceof DuplicateEmailError));
  void app.register(greetingRoutes);
  // Always 200 while the process serves: the database's state is reported, not propagated.
  void app.register(
    healthPlugin({ schema: Health, report: async () => ({ status: 'healthy' as const, database: await databaseStatus(store) }) }),
  );
  // Not ready while the database is unreachable: an orchestrator sends requests to instances that can serve them.
  void app.register(readyPlugin({ check: databaseReady(store) }));
  void app.register(listUsersPlugin(store));
  void app.register(createUserPlugin(store));
  return app;
}
