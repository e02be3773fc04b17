import { runService } from '@sample-services/kit/run-service';
import { service } from './service.js';
import { createFrontendApp } from './app.js';
import { createBackendClient } from './backend-client.js';
import { readConfig } from './config.js';

await runService(service, {
  readConfig,
  build: ({ config, logger }) => {
    logger.info({ backend: config.backendUrl.href, timeoutMs: config.backendTimeoutMs }, 'users come from the backend');
    return {
      app: createFrontendApp({
        logger,
        backend: createBackendClient({ url: config.backendUrl, timeoutMs: config.backendTimeoutMs, log: logger }),
      }),
    };
  },
});
