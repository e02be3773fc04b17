import { runService } from '@sample-services/kit/run-service';
import { service } from './service.js';
import { createSimpleApp } from './app.js';
import { readConfig } from './config.js';

await runService(service, {
  readConfig,
  build: ({ config, logger }) => ({ app: createSimpleApp({ logger, environment: config.mode, metrics: config.metrics }) }),
});
