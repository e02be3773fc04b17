import { runService } from '@sample-services/kit';
import { service } from './service.js';
import { startUserStore } from '@sample-services/users';
import { createBackendApp } from './app.js';
import { readConfig } from './config.js';

await runService(service, {
  readConfig,
  build: async ({ config, logger }) => ({ app: createBackendApp({ logger, store: await startUserStore(config.store, logger) }) }),
});
