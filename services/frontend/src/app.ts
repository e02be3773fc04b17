import { apiDocs } from '@sample-services/kit/openapi';
import { cors } from '@sample-services/kit/cors';
import { countRequests, metricsRoute } from '@sample-services/kit/metrics';
import { createServer, type App } from '@sample-services/kit/server';
import { healthPlugin } from '@sample-services/kit/health';
import { loadShedding } from '@sample-services/kit/load-shedding';
import { readyPlugin } from '@sample-services/kit/ready';
import type { Logger } from '@sample-services/kit/logger';
import { service } from './service.js';
import { Type } from 'typebox';
import type { BackendClient } from './backend-client.js';
import { pageRoutes } from './page/page-routes.js';
import { usersRoute } from './users-route.js';

export interface FrontendAppOptions {
  logger: Logger | false;
  /** Where the users come from; the app closes it when it closes. */
  backend: BackendClient;
}

const Health = Type.Object(
  { status: Type.Literal('healthy'), service: Type.Literal('frontend') },
  { examples: [{ status: 'healthy', service: 'frontend' }] },
);

/** Frontend of variant C (spec 4.3): its own health, and the user list forwarded from the backend. */
export function createFrontendApp(options: FrontendAppOptions): App {
  const { backend } = options;
  const app = createServer({ logger: options.logger, api: { title: 'frontend', description: service.summary } });
  void app.register(cors).register(apiDocs).register(countRequests).register(metricsRoute).register(loadShedding);
  // The backend's addresses are known before the server listens; they are followed until it closes.
  app.addHook('onReady', () => backend.start());
  app.addHook('onClose', () => backend.close());
  void app.register(healthPlugin({ schema: Health, report: () => ({ status: 'healthy' as const, service: 'frontend' as const }) }));
  // Ready whenever it serves, whatever the backend's state: the backend has its own readiness, and
  // frontends taken out of rotation while it is down would leave nothing to answer, their JSON 500
  // ("Failed to fetch users") replaced by the load balancer's own error page.
  void app.register(readyPlugin());
  void app.register(usersRoute(backend));
  void app.register(pageRoutes());
  return app;
}
