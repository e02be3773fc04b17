import { runService } from '@svc/kit';
import { startUserStore } from '@svc/users';
import { createDatabaseApp } from './app.js';

await runService({
  name: 'database',
  // FLASK_ENV first: the run mode variable of the original variant B (spec 4.5).
  defaults: { port: 5000, modeVariables: ['FLASK_ENV', 'NODE_ENV'] },
  build: async ({ env, logger }) => ({ app: createDatabaseApp({ logger, store: await startUserStore(env, logger) }) }),
  startedMessage: (port) => `Database app running on port ${port}`,
});
