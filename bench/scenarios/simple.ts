import { getRoute, measureRoute, startMeasured, type Row, type RunSettings } from '../measure.js';
import { nodeServer, serviceServer } from '../server-process.js';
import {
  atLeast,
  atMost,
  cpuRatio,
  processTargets,
  ratioDropPoints,
  throughputRatio,
  type ScenarioResult,
  type TargetCheck,
} from '../targets.js';

export const bareSimple = 'bench/dist/baselines/bare-simple.js';

const routes = ['/', '/api/users', '/health'];

// From callgrind (bench/README.md, "Instructions per request"): A's answers, counting included, run no more
// user-space instructions than bare's; what is left is how long they take, not how many there are.
const cpuWhyMissed =
  "A's answers run no more user-space instructions than bare's (callgrind, the counting for /metrics included), so the gap is time per instruction in a larger process (Fastify, TypeBox and Ajv in its heap, the image's young-generation cap, which bare runs without) or kernel time; the two are not separated yet";

/**
 * A: variant A against bare node:http serving the same bytes, and A again with METRICS=off (no
 * request counted, no /metrics), all three on the server core in the same rounds: the points of the
 * ratio to bare node:http that the metrics cost, round by round (issue 12: under 5).
 */
export async function runSimple(settings: RunSettings): Promise<ScenarioResult> {
  const subject = await startMeasured(serviceServer('simple', 'simple', {}, settings.cpus.server), settings.startups);
  const withoutMetrics = await startMeasured(
    serviceServer('simple, METRICS=off', 'simple', { METRICS: 'off' }, settings.cpus.server),
    settings.startups,
  );
  const baseline = await startMeasured(nodeServer('bare node:http', bareSimple, {}, settings.cpus.server), settings.startups);
  try {
    const rows: Row[] = [];
    for (const path of routes) {
      rows.push(...(await measureRoute('A', getRoute(path), [subject, withoutMetrics, baseline], settings)));
    }
    const metricsCost: TargetCheck[] = routes.map((path) =>
      atMost(
        `A GET ${path}: ratio drop with metrics on, points`,
        ratioDropPoints(rows, `GET ${path}`, subject.label, withoutMetrics.label, baseline.label),
        5,
      ),
    );
    return {
      rows,
      targets: [
        atLeast('A GET /: simple / bare node:http', throughputRatio(rows, 'GET /', subject.label, baseline.label), 0.85),
        atLeast('A GET /api/users: simple / bare node:http', throughputRatio(rows, 'GET /api/users', subject.label, baseline.label), 0.85),
        ...routes.map((path) =>
          atMost(
            `A GET ${path}: CPU µs per request / bare node:http's`,
            cpuRatio(rows, `GET ${path}`, subject.label, baseline.label),
            1.15,
            cpuWhyMissed,
          ),
        ),
        ...metricsCost,
        ...processTargets(rows, subject.label, baseline.label),
      ],
    };
  } finally {
    await Promise.all([subject.stop(), withoutMetrics.stop(), baseline.stop()]);
  }
}
