import { runService } from '@svc/kit';
import { services } from '@svc/manifest';
import { startUserStore } from '@svc/users';
import { createDatabaseApp } from './app.js';
import { readConfig } from './config.js';

await runService(services.database, {
  readConfig,
  build: async ({ config, logger }) => ({ app: createDatabaseApp({ logger, store: await startUserStore(config.store, logger) }) }),
});
