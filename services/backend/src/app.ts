import { apiDocs } from '@sample-services/kit/openapi';
import { cors } from '@sample-services/kit/cors';
import { countRequests, metricsRoute } from '@sample-services/kit/metrics';
import { createServer, type App } from '@sample-services/kit/server';
import { healthPlugin } from '@sample-services/kit/health';
import { loadShedding } from '@sample-services/kit/load-shedding';
import { readyPlugin } from '@sample-services/kit/ready';
import type { Logger } from '@sample-services/kit/logger';
import { service } from './service.js';
import { databaseReady, databaseStatus, DatabaseStatus, listUsersPlugin } from '@sample-services/users/routes';
import { DuplicateEmailError, type UserStore } from '@sample-services/users/user-store';
import { meterStore } from '@sample-services/users/store-metrics';
import { Type } from 'typebox';

export interface BackendAppOptions {
  logger: Logger | false;
  /** The users' store; the app closes it when it closes. */
  store: UserStore;
}

const Health = Type.Object(
  { status: Type.Literal('healthy'), service: Type.Literal('backend'), database: DatabaseStatus },
  { examples: [{ status: 'healthy', service: 'backend', database: 'connected' }] },
);

/** Backend of variant C (spec 4.3): health with database connectivity and the user list; no create. */
export function createBackendApp(options: BackendAppOptions): App {
  const { store: unmetered } = options;
  const app = createServer({ logger: options.logger, api: { title: 'backend', description: service.summary } });
  void app.register(cors).register(apiDocs).register(countRequests).register(metricsRoute).register(loadShedding);
  app.addHook('onClose', () => unmetered.close());
  // Counted in /metrics: the pool's state and failed queries (a taken email is not a failure).
  const store = meterStore(app, unmetered, (error) => !(error instanceof DuplicateEmailError));
  void app.register(
    healthPlugin({
      schema: Health,
      report: async () => ({ status: 'healthy' as const, service: 'backend' as const, database: await databaseStatus(store) }),
    }),
  );
  // Not ready while the database is unreachable: an orchestrator sends requests to instances that can serve them.
  void app.register(readyPlugin({ check: databaseReady(store) }));
  void app.register(listUsersPlugin(store));
  return app;
}
