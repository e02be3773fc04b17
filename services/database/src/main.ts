import { runService } from '@sample-services/kit/run-service';
import { service } from './service.js';
import { startUserStore } from '@sample-services/users/start-store';
import { createDatabaseApp } from './app.js';
import { readConfig } from './config.js';

await runService(service, {
  readConfig,
  build: async ({ config, logger }) => ({ app: createDatabaseApp({ logger, store: await startUserStore(config.store, logger) }) }),
});
