import { runService } from '@svc/kit';
import { createSimpleApp } from './app.js';

await runService({
  name: 'simple',
  defaults: { port: 3000 },
  build: ({ config, logger }) => ({ app: createSimpleApp({ logger, environment: config.mode }) }),
  startedMessage: (port) => `Server running on port ${port}`,
});
