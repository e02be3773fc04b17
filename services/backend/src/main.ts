import { runService } from '@svc/kit';
import { service } from './service.js';
import { startUserStore } from '@svc/users';
import { createBackendApp } from './app.js';
import { readConfig } from './config.js';

await runService(service, {
  readConfig,
  build: async ({ config, logger }) => ({ app: createBackendApp({ logger, store: await startUserStore(config.store, logger) }) }),
});
