import { runService } from '@svc/kit';
import { startUserStore } from '@svc/users';
import { createBackendApp } from './app.js';

await runService({
  name: 'backend',
  // FLASK_ENV first: the run mode variable of the original backend (spec 4.5).
  defaults: { port: 5000, modeVariables: ['FLASK_ENV', 'NODE_ENV'] },
  build: async ({ env, logger }) => ({ app: createBackendApp({ logger, store: await startUserStore(env, logger) }) }),
  startedMessage: (port) => `Backend service running on port ${port}`,
});
