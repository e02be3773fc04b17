/**
 * GET /metrics in the Prometheus text format: the app's requests (request-metrics.ts), its
 * in-flight requests and what its service adds (database pool, upstream errors), and the process's
 * own metrics (CPU, memory, heap, event loop lag, GC: prom-client's default metrics).
 *
 * Each app has its own registry, so tests build as many apps as they like. The process's metrics
 * are in one registry per process, made on the first scrape: they describe the process, not an
 * app, and prom-client's collector starts an event-loop monitor and a GC observer that never stop,
 * which one per app would pile up in a test run.
 */
import { createServer as createHttpServer, type Server } from 'node:http';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { observeRequests } from './request-metrics.js';
import type { App } from './server.js';

export const metricsContentType = Registry.PROMETHEUS_CONTENT_TYPE;

/** Shown by every app's /metrics: the process's metrics, and what a package counts process-wide (the upstream errors). */
export const processRegistry = new Registry();
let defaultMetricsCollected = false;

export interface AppMetrics {
  /** Where a service registers its own metrics (the `registers` option of prom-client's metrics). */
  readonly registry: Registry;
}

const byApp = new WeakMap<object, AppMetrics>();

/** The app's metrics: its requests observed in its hooks (request-metrics.ts), in a registry of its own. */
export function attachMetrics(app: App): AppMetrics {
  const registry = new Registry();
  observeRequests(app, registry);
  const metrics = { registry };
  byApp.set(app, metrics);
  return metrics;
}

/** The app's metrics, for a service that adds its own (see poolMetrics, or prom-client with `registers`). */
export function metricsOf(app: App): AppMetrics {
  const metrics = byApp.get(app);
  if (metrics === undefined) throw new Error('metricsOf: not an app made by createServer, or one made with metrics: false');
  return metrics;
}

/** The whole scrape: the process's metrics, then the app's. */
export async function metricsText(metrics: AppMetrics): Promise<string> {
  if (!defaultMetricsCollected) {
    defaultMetricsCollected = true;
    collectDefaultMetrics({ register: processRegistry });
  }
  const [processText, appText] = await Promise.all([processRegistry.metrics(), metrics.registry.metrics()]);
  return `${processText}\n${appText}`;
}

/**
 * Serves the app's metrics on a port of their own (GET /metrics; anything else 404), opened when
 * the app listens and closed with it: for a transparent proxy, whose own port belongs to its
 * upstream. Logs the port it listens on, which `port()` also gives once the app listens; a port it
 * cannot listen on is logged as an error, and the app serves on without metrics.
 */
export function serveMetricsOnPort(app: App, options: { port: number; host: string }): { port: () => number | undefined } {
  const metrics = metricsOf(app);
  let server: Server | undefined;
  const port = (): number | undefined => {
    const address = server?.address();
    return typeof address === 'object' && address !== null ? address.port : undefined;
  };
  app.addHook('onListen', async () => {
    server = createHttpServer((request, response) => {
      if (request.method !== 'GET' || (request.url ?? '').split('?', 1)[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"Not found: only GET /metrics here"}');
        return;
      }
      metricsText(metrics).then(
        (text) => response.writeHead(200, { 'content-type': metricsContentType }).end(text),
        (error: unknown) => {
          app.log.error({ err: error }, 'could not collect the metrics');
          response.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end('{"error":"Internal server error"}');
        },
      );
    });
    const listening = server;
    try {
      await new Promise<void>((resolve, reject) => {
        listening.once('listening', resolve).once('error', reject).listen(options.port, options.host);
      });
    } catch (error) {
      // The service's own work goes on: metrics are not worth refusing its traffic for.
      server = undefined;
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
    if (server === undefined) return;
    server.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  });
  return { port };
}
