import { getRoute, measureRoute, startMeasured, type Row, type RunSettings } from '../measure.js';
import { nodeServer, serviceServer, type ServerSpec } from '../server-process.js';
import {
  atLeast,
  atMost,
  cpuRatio,
  expressApp,
  idiomaticApp,
  processTargets,
  ratioDropPoints,
  rssAfterLoad,
  roundRatio,
  type ScenarioResult,
  type TargetCheck,
} from '../targets.js';

export const bareSimple = 'bench/dist/baselines/bare-simple.js';
const idiomaticSimple = 'bench/dist/baselines/idiomatic-simple.js';
const expressSimple = 'bench/dist/baselines/express-simple.js';

/**
 * Variant A as a copier would write it on Fastify, on Node's defaults: the baseline of A's CPU per
 * request, RSS and start-up, and of every service's start-up (issue 42), which each scenario times
 * beside its own services.
 */
export const idiomaticAppSpec = (settings: RunSettings): ServerSpec => nodeServer(idiomaticApp, idiomaticSimple, {}, settings.cpus.server);

const routes = ['/', '/api/users', '/health'];
const routeName = (path: string): string => `GET ${path}`;

/**
 * A: variant A against the baselines of issue 42, all on the server core in the same rounds: the
 * idiomatic Fastify app (CPU per request, RSS, start-up) and the original's Express app (req/s);
 * A again with METRICS=off (no request counted, no /metrics), for the points of the ratio to bare
 * node:http that the metrics cost (issue 12: under 5); and bare node:http serving the same bytes, the floor, without a
 * target. The idiomatic app is the table's baseline.
 */
export async function runSimple(settings: RunSettings): Promise<ScenarioResult> {
  const contenders = await startMeasured(
    [
      serviceServer('simple', 'simple', {}, settings.cpus.server),
      serviceServer('simple, METRICS=off', 'simple', { METRICS: 'off' }, settings.cpus.server),
      nodeServer('bare node:http', bareSimple, {}, settings.cpus.server),
      nodeServer(expressApp, expressSimple, {}, settings.cpus.server),
      idiomaticAppSpec(settings),
    ],
    settings.startups,
  );
  const [subject, withoutMetrics, bare, , idiomatic] = contenders;
  try {
    const rows: Row[] = [];
    for (const path of routes) rows.push(...(await measureRoute('A', getRoute(path), contenders, settings)));
    const metricsCost: TargetCheck[] = routes.map((path) =>
      atMost(
        `A GET ${path}: ratio drop with metrics on, points`,
        ratioDropPoints(rows, routeName(path), subject.label, withoutMetrics.label, bare.label),
        5,
        `in the same rounds A took ${cpuRatio(rows, routeName(path), subject.label, withoutMetrics.label).toFixed(2)} of its own CPU per request with METRICS=off: ` +
          "what counting each request (prom-client's counter and histogram) costs on one core, where req/s follows the CPU per request",
      ),
    );
    return {
      rows,
      targets: [
        // Issue 42, on each route, each ratio the median of the per-round ratios.
        ...routes.map((path) =>
          atMost(
            `A GET ${path}: CPU µs per request / ${idiomaticApp}'s`,
            cpuRatio(rows, routeName(path), subject.label, idiomatic.label),
            1.1,
          ),
        ),
        ...routes.map((path) =>
          atLeast(
            `A GET ${path}: req/s / ${expressApp}'s`,
            roundRatio(rows, routeName(path), subject.label, expressApp),
            1.6,
            `in the same rounds the ${idiomaticApp} app served ${roundRatio(rows, routeName(path), idiomatic.label, expressApp).toFixed(2)} of ${expressApp}'s req/s: ` +
              "at the idiomatic app's CPU per request, A's req/s is the idiomatic app's",
          ),
        ),
        atMost(
          `A with no V8 flag: RSS after load / ${idiomaticApp}'s`,
          rssAfterLoad(rows, subject.label) / rssAfterLoad(rows, idiomatic.label),
          1.1,
        ),
        ...metricsCost,
        ...processTargets(rows, subject.label, [expressApp], { subjectMs: subject.startupMs, idiomaticMs: idiomatic.startupMs }),
      ],
    };
  } finally {
    await Promise.all(contenders.map((server) => server.stop()));
  }
}
