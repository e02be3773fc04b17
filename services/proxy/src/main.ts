import { runService } from '@sample-services/kit/run-service';
import { shareMetrics } from '@sample-services/kit/metrics';
import { service } from './service.js';
import { createProxyApp, type ProxyAppOptions } from './app.js';
import { readConfig } from './config.js';
import { serveBeside } from './https-listener.js';

await runService(service, {
  readConfig,
  build: ({ config, logger }) => {
    const options: ProxyAppOptions = {
      logger,
      upstream: config.upstream,
      maxConnections: config.maxConnections,
      upstreamTimeoutMs: config.upstreamTimeoutMs,
      resolveIntervalMs: config.upstreamResolveMs,
    };
    const metrics = config.metricsPort === undefined ? undefined : { port: config.metricsPort, host: config.host };
    const { tls } = config;
    if (tls === undefined) return { app: createProxyApp({ ...options, metrics }) };
    // With HTTPS, PORT redirects to it (health paths excepted) and TLS_PORT forwards, each one Fastify app.
    const plain = createProxyApp({ ...options, metrics, redirectToHttpsPort: tls.port });
    const secure = createProxyApp({ ...options, tls, hstsMaxAge: tls.hstsMaxAge });
    // One process: METRICS_PORT counts the requests of both listeners.
    shareMetrics(secure, plain);
    serveBeside(plain, secure, { port: tls.port, host: config.host, maxConnections: config.maxConnections });
    return { app: plain };
  },
});
