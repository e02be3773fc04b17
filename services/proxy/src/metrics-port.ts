import { once } from 'node:events';
import { createServer } from 'node:http';
import { metricsContentType, metricsOf, metricsText } from '@sample-services/kit/metrics';
import type { App } from '@sample-services/kit/server';

/**
 * Serves the app's metrics on a port of their own (GET /metrics; anything else 404), opened when
 * the app listens and closed with it: every path of the proxy's own port belongs to its upstream.
 * A port it cannot listen on is logged as an error, and the proxy serves on without metrics.
 */
export function serveMetricsOnPort(app: App, options: { port: number; host: string }): { port: () => number | undefined } {
  const metrics = metricsOf(app);
  const json = { 'content-type': 'application/json; charset=utf-8' };
  const server = createServer((request, response) => {
    if (request.method !== 'GET' || (request.url ?? '').split('?', 1)[0] !== '/metrics') {
      response.writeHead(404, json).end('{"error":"Not found: only GET /metrics here"}');
      return;
    }
    metricsText(metrics).then(
      (text) => response.writeHead(200, { 'content-type': metricsContentType }).end(text),
      (error: unknown) => {
        app.log.error({ err: error }, 'could not collect the metrics');
        response.writeHead(500, json).end('{"error":"Internal server error"}');
      },
    );
  });
  const port = (): number | undefined => {
    const address = server.address();
    return typeof address === 'object' && address !== null ? address.port : undefined;
  };
  app.addHook('onListen', async () => {
    try {
      await once(server.listen(options.port, options.host), 'listening');
    } catch (error) {
      // The proxy's own work goes on: metrics are not worth refusing its traffic for.
      const reason = (error as NodeJS.ErrnoException).code ?? String(error);
      app.log.error(
        { err: error },
        `metrics not served: cannot listen on port ${options.port} (${reason}); the service goes on without them`,
      );
      return;
    }
    app.log.info({ metricsPort: port() }, `metrics served on port ${port()}`);
  });
  app.addHook('onClose', async () => {
    if (!server.listening) return;
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return { port };
}
