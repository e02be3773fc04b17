import { runService } from '@svc/kit';
import { services } from '@svc/manifest';
import { startUserStore } from '@svc/users';
import { createBackendApp } from './app.js';
import { readConfig } from './config.js';

await runService(services.backend, {
  readConfig,
  build: async ({ config, logger }) => ({ app: createBackendApp({ logger, store: await startUserStore(config.store, logger) }) }),
});
