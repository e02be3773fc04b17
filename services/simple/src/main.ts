import { runService } from '@svc/kit';
import { services } from '@svc/manifest';
import { createSimpleApp } from './app.js';
import { readConfig } from './config.js';

await runService(services.simple, {
  readConfig,
  build: ({ config, logger }) => ({ app: createSimpleApp({ logger, environment: config.mode, metrics: config.metrics }) }),
});
