import { lookup } from 'node:dns/promises';
import { hostname } from 'node:os';
import { getRoute, measureRoute, startMeasured, type Route, type Row, type RunSettings } from '../measure.js';
import { benchNginx, nginxInstalled } from '../nginx.js';
import { nodeServer, serviceServer, startServer, type ServerProcess } from '../server-process.js';
import {
  atLeast,
  atMost,
  cpuRatio,
  p99Ratio,
  processTargets,
  rowOf,
  roundRatio,
  throughputRatio,
  type ScenarioResult,
} from '../targets.js';
import { bareSimple } from './simple.js';

export const bareRelay = 'bench/dist/baselines/bare-relay.js';
const proxyOnNodeDefaults = 'proxy, Node defaults';
// The two Node proxies a user would reach for (issue 11), each as its README shows it.
const nodePeers = [
  { label: 'http-proxy', script: 'bench/dist/baselines/peer-http-proxy.js' },
  { label: '@fastify/http-proxy', script: 'bench/dist/baselines/peer-fastify-http-proxy.js' },
];

// Latency compared at saturation would only restate throughput (the closed loop's latency is
// connections / throughput), so the p99 target is checked at one pace all paths sustain:
// every connection waits 10 ms before each request, at most 5,000 req/s over 50 connections.
const pacedRoute: Route = { ...getRoute('/api/users'), name: 'GET /api/users, paced', pauseMs: 10 };

/**
 * The machine's host name when getaddrinfo gives 127.0.0.1 alone for it (/etc/hosts), else
 * undefined. The proxy never resolves an upstream named by an IP address or `localhost`, so
 * only a name measures it as deployed: resolved again every second, a pool per address.
 */
async function loopbackName(): Promise<string | undefined> {
  const name = hostname();
  try {
    const found = await lookup(name, { all: true });
    return found.length > 0 && found.every((entry) => entry.address === '127.0.0.1') ? name : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Proxy: the TypeScript proxy as the image runs it and on Node's defaults, its two Node peers, a
 * bare undici relay, and nginx tuned and as deploy/ runs it, each alone on the server core, in
 * front of the same bare node:http upstream (on the other core, with the load generator); and the
 * upstream loaded directly, the path without a proxy.
 */
export async function runProxy(settings: RunSettings): Promise<ScenarioResult> {
  const upstream = await startServer(nodeServer('direct (bare upstream)', bareSimple, {}, settings.cpus.other));
  const upstreamUrl = upstream.baseUrl;
  const upstreamPort = Number(new URL(upstreamUrl).port);
  const name = await loopbackName();
  if (name === undefined) {
    process.stderr.write(
      `bench: ${hostname()} does not resolve to 127.0.0.1 alone: the proxy's upstream is an IP address, never resolved\n`,
    );
  }
  const proxyEnv = { UPSTREAM_URL: name === undefined ? upstreamUrl : `http://${name}:${upstreamPort}` };
  const started: ServerProcess[] = [upstream];
  const cleanups: (() => void)[] = [];
  try {
    const [proxy, relay] = await startMeasured(
      [
        serviceServer('proxy', 'proxy', proxyEnv, settings.cpus.server),
        nodeServer('bare node:http + undici', bareRelay, { BACKEND_URL: upstreamUrl }, settings.cpus.server),
      ],
      settings.startups,
    );
    started.push(proxy, relay);
    // The same proxy on Node's defaults, as the peers and the bare relay run: the image's young-generation
    // cap (the manifest's serviceNodeOptions) holds the RSS of a large relayed body down and costs CPU per request.
    const onDefaults = await startServer(
      serviceServer(proxyOnNodeDefaults, 'proxy', { ...proxyEnv, NODE_OPTIONS: '' }, settings.cpus.server),
    );
    started.push(onDefaults);
    const peers: ServerProcess[] = [];
    for (const { label, script } of nodePeers) {
      const peer = await startServer(nodeServer(label, script, { BACKEND_URL: upstreamUrl }, settings.cpus.server));
      peers.push(peer);
      started.push(peer);
    }
    const contenders = [proxy, onDefaults, ...peers, relay, upstream];
    if (nginxInstalled()) {
      // The tuned one last: the baseline of every ratio in the table.
      for (const config of ['variable', 'tuned'] as const) {
        const nginx = await benchNginx(config, upstreamPort, settings.cpus.server);
        cleanups.push(nginx.cleanup);
        const server = await startServer(nginx.spec);
        started.push(server);
        contenders.push(server);
      }
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
    // The peer with the least median CPU per request; the ratio to it is still taken round by round.
    const bestPeer = peers.reduce((best, peer) =>
      rowOf(rows, route, peer.label).cpuUsPerRequest < rowOf(rows, route, best.label).cpuUsPerRequest ? peer : best,
    );
    const targets = [
      // A Node proxy cannot relay with less CPU than Node's HTTP server and undici themselves take:
      // the bare relay is that ceiling, so the proxy is held to it and to a margin over its peers.
      atMost(`Proxy GET /api/users: CPU µs per request / ${relay.label}'s`, cpuRatio(rows, route, proxy.label, relay.label), 1.1),
      atLeast(
        `Proxy GET /api/users: best Node peer's CPU µs per request (${bestPeer.label}) / proxy's`,
        cpuRatio(rows, route, bestPeer.label, proxy.label),
        1.2,
      ),
      // What the image's young-generation cap costs the proxy (issue 10 set it for large lists).
      atLeast(`Proxy GET /api/users: proxy / ${proxyOnNodeDefaults}`, roundRatio(rows, route, proxy.label, onDefaults.label), 0.9),
      // The same ceiling for latency: the bare relay adds what Node's HTTP server and undici add to the direct path.
      atMost(
        `Proxy GET /api/users at the same pace: p99 / ${relay.label}'s`,
        p99Ratio(rows, pacedRoute.name, proxy.label, relay.label),
        1.1,
      ),
      // Memory against a bare relay using the same HTTP client: what any Node proxy needs.
      ...processTargets(rows, proxy.label, relay.label),
    ];
    if (baseline !== upstream) {
      // Both on the server core alone: req/s there is what a request costs in CPU, so a miss reads in that cost.
      const vsNginx = (label: string): string => cpuRatio(rows, route, label, baseline.label).toFixed(2);
      const whyMissed = `in the same rounds the proxy took ${vsNginx(proxy.label)} times tuned nginx's CPU per request, and the ${relay.label} relay ${vsNginx(relay.label)} times: the gap is in what Node's HTTP server and client cost per request against nginx's C`;
      targets.unshift(
        atLeast('Proxy GET /api/users: proxy / tuned nginx', throughputRatio(rows, route, proxy.label, baseline.label), 0.6, whyMissed),
      );
    }
    return { rows, targets };
  } finally {
    await Promise.all(started.map((server) => server.stop()));
    for (const cleanup of cleanups) cleanup();
  }
}
