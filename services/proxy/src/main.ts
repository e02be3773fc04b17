import { runService } from '@svc/kit';
import { createProxyApp } from './app.js';
import { readProxyConfig } from './config.js';

await runService({
  name: 'proxy',
  defaults: { port: 80 },
  build: ({ env, logger }) => ({ app: createProxyApp({ logger, ...readProxyConfig(env) }) }),
  startedMessage: (port) => `Proxy running on port ${port}`,
});
