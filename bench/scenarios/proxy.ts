import { getRoute, measureRoute, startMeasured, type Route, type Row, type RunSettings } from '../measure.js';
import { nginxInstalled, tunedNginx } from '../nginx.js';
import { nodeServer, serviceServer, startServer, type ServerProcess } from '../server-process.js';
import { atLeast, atMost, processTargets, rowOf, throughputRatio, type ScenarioResult } from '../targets.js';
import { bareSimple } from './simple.js';

export const bareRelay = 'bench/dist/baselines/bare-relay.js';

// Latency compared at saturation would only restate throughput (the closed loop's latency is
// connections / throughput), so the p99 target is checked at one pace all paths sustain:
// every connection waits 10 ms before each request, at most 5,000 req/s over 50 connections.
const pacedRoute: Route = { ...getRoute('/api/users'), name: 'GET /api/users, paced', pauseMs: 10 };

/**
 * Proxy: the TypeScript proxy, a bare undici relay and a tuned nginx, each alone on the server
 * core, in front of the same bare node:http upstream (on the other core, with the load
 * generator); and the upstream loaded directly, the path without a proxy.
 */
export async function runProxy(settings: RunSettings): Promise<ScenarioResult> {
  const upstream = await startServer(nodeServer('direct (bare upstream)', bareSimple, {}, settings.cpus.other));
  const upstreamUrl = upstream.baseUrl;
  const proxyEnv = { UPSTREAM_URL: upstreamUrl };
  const started: ServerProcess[] = [upstream];
  const cleanups: (() => void)[] = [];
  try {
    const proxy = await startMeasured(serviceServer('proxy', 'proxy', proxyEnv, settings.cpus.server), settings.startups);
    started.push(proxy);
    const relay = await startServer(nodeServer('bare node:http + undici', bareRelay, { BACKEND_URL: upstreamUrl }, settings.cpus.server));
    started.push(relay);
    const contenders = [proxy, relay, upstream];
    if (nginxInstalled()) {
      const nginx = await tunedNginx(Number(new URL(upstreamUrl).port), settings.cpus.server);
      cleanups.push(nginx.cleanup);
      const reference = await startServer(nginx.spec);
      started.push(reference);
      contenders.push(reference);
    } else {
      process.stderr.write(
        'bench: nginx is not installed (apt-get install nginx-light): the proxy is compared with the direct path only\n',
      );
    }
    const baseline = contenders[contenders.length - 1] as ServerProcess;
    const rows: Row[] = [];
    for (const route of [getRoute('/api/users'), pacedRoute, getRoute('/health')])
      rows.push(...(await measureRoute('Proxy', route, contenders, settings)));
    const route = 'GET /api/users';
    const p99 = (label: string): number => rowOf(rows, pacedRoute.name, label).p99Ms;
    const targets = [
      atMost('Proxy GET /api/users at the same pace: p99 / direct p99', p99(proxy.label) / p99(upstream.label), 2),
      // Memory against a bare relay using the same HTTP client: what any Node proxy needs.
      ...processTargets(rows, proxy.label, relay.label, 500),
    ];
    if (baseline !== upstream)
      targets.unshift(atLeast('Proxy GET /api/users: proxy / tuned nginx', throughputRatio(rows, route, proxy.label, baseline.label), 0.6));
    return { rows, targets };
  } finally {
    await Promise.all(started.map((server) => server.stop()));
    for (const cleanup of cleanups) cleanup();
  }
}
