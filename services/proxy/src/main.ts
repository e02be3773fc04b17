import { runService } from '@sample-services/kit';
import { service } from './service.js';
import { createProxyApp } from './app.js';
import { readConfig } from './config.js';

await runService(service, {
  readConfig,
  build: ({ config, logger }) => ({
    app: createProxyApp({
      logger,
      upstream: config.upstream,
      maxConnections: config.maxConnections,
      upstreamTimeoutMs: config.upstreamTimeoutMs,
      resolveIntervalMs: config.upstreamResolveMs,
      metrics: config.metricsPort === undefined ? undefined : { port: config.metricsPort, host: config.host },
    }),
  }),
});
