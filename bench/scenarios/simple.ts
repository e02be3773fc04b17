import { getRoute, measureRoute, startMeasured, type Row, type RunSettings } from '../measure.js';
import { nodeServer, serviceServer } from '../server-process.js';
import {
  atLeast,
  atMost,
  cpuRatio,
  pooledCpuRatio,
  processTargets,
  ratioDropPoints,
  rssAfterLoad,
  throughputRatio,
  type ScenarioResult,
  type TargetCheck,
} from '../targets.js';

export const bareSimple = 'bench/dist/baselines/bare-simple.js';

const routes = ['/', '/api/users', '/health'];
const routeName = (path: string): string => `GET ${path}`;

/**
 * Why A can miss bare's CPU per request, and with it bare's req/s on one core, by more than a target.
 * From callgrind (bench/README.md, "Instructions per request"), A's answers run no more user-space
 * instructions than bare's; A on Node's defaults, in the same rounds, says what the image's
 * young-generation cap adds, and what it saves in memory.
 */
function whyMissed(rows: Row[], paths: string[], subject: string, onDefaults: string, baseline: string): string {
  const rss = (label: string): number => rssAfterLoad(rows, label);
  const cpu = (label: string): string => pooledCpuRatio(rows, paths.map(routeName), label, baseline).toFixed(2);
  return (
    `in the same rounds A took ${cpu(subject)} of bare's CPU per request, and ${cpu(onDefaults)} on Node's defaults, without the image's young-generation cap; A's answers run no more user-space instructions than bare's (callgrind). ` +
    `The cap holds A's RSS after load to ${(rss(subject) / rss(baseline)).toFixed(2)} of bare's (target 1.3), where Node's defaults reach ${(rss(onDefaults) / rss(baseline)).toFixed(2)}`
  );
}

/**
 * A: variant A against bare node:http serving the same bytes, A again with METRICS=off (no request
 * counted, no /metrics), and A on Node's defaults (no young-generation cap), all on the server core in
 * the same rounds: the points of the ratio to bare node:http that the metrics cost, round by round
 * (issue 12: under 5), and what the cap costs in CPU and saves in memory.
 */
export async function runSimple(settings: RunSettings): Promise<ScenarioResult> {
  const [subject, withoutMetrics, onDefaults, baseline] = await startMeasured(
    [
      serviceServer('simple', 'simple', {}, settings.cpus.server),
      serviceServer('simple, METRICS=off', 'simple', { METRICS: 'off' }, settings.cpus.server),
      serviceServer('simple, Node defaults', 'simple', { NODE_OPTIONS: '' }, settings.cpus.server),
      nodeServer('bare node:http', bareSimple, {}, settings.cpus.server),
    ],
    settings.startups,
  );
  try {
    const rows: Row[] = [];
    for (const path of routes) {
      rows.push(...(await measureRoute('A', getRoute(path), [subject, withoutMetrics, onDefaults, baseline], settings)));
    }
    const metricsCost: TargetCheck[] = routes.map((path) =>
      atMost(
        `A GET ${path}: ratio drop with metrics on, points`,
        ratioDropPoints(rows, routeName(path), subject.label, withoutMetrics.label, baseline.label),
        5,
        `in the same rounds A took ${cpuRatio(rows, routeName(path), subject.label, withoutMetrics.label).toFixed(2)} of its own CPU per request with METRICS=off: ` +
          "what counting each request (prom-client's counter and histogram) costs on one core, where req/s follows the CPU per request",
      ),
    );
    return {
      rows,
      targets: [
        ...['/', '/api/users'].map((path) =>
          atLeast(
            `A GET ${path}: simple / bare node:http`,
            throughputRatio(rows, routeName(path), subject.label, baseline.label),
            0.85,
            whyMissed(rows, [path], subject.label, onDefaults.label, baseline.label),
          ),
        ),
        // One figure for A (issue 31): every round pair of its three routes, since one route's median of
        // a run's rounds moved by 0.1-0.3 from one run to the next (bench/README.md, "Rounds").
        atMost(
          `A, its three routes: CPU µs per request / bare node:http's`,
          pooledCpuRatio(rows, routes.map(routeName), subject.label, baseline.label),
          1.15,
          whyMissed(rows, routes, subject.label, onDefaults.label, baseline.label),
        ),
        ...metricsCost,
        ...processTargets(rows, subject.label, baseline.label),
      ],
    };
  } finally {
    await Promise.all([subject.stop(), withoutMetrics.stop(), onDefaults.stop(), baseline.stop()]);
  }
}
