import { getRoute, measureRoute, startMeasured, type Row, type RunSettings } from '../measure.js';
import { nodeServer, serviceServer } from '../server-process.js';
import { atLeast, processTargets, throughputRatio, type ScenarioResult } from '../targets.js';

export const bareSimple = 'bench/dist/baselines/bare-simple.js';

/** A: variant A against bare node:http serving the same bytes, both on the server core. */
export async function runSimple(settings: RunSettings): Promise<ScenarioResult> {
  const subject = await startMeasured(serviceServer('simple', 'simple', {}, settings.cpus.server), settings.startups);
  const baseline = await startMeasured(nodeServer('bare node:http', bareSimple, {}, settings.cpus.server), settings.startups);
  try {
    const rows: Row[] = [];
    for (const path of ['/', '/api/users', '/health']) {
      rows.push(...(await measureRoute('A', getRoute(path), [subject, baseline], settings)));
    }
    return {
      rows,
      targets: [
        atLeast('A GET /: simple / bare node:http', throughputRatio(rows, 'GET /', subject.label, baseline.label), 0.85),
        atLeast('A GET /api/users: simple / bare node:http', throughputRatio(rows, 'GET /api/users', subject.label, baseline.label), 0.85),
        ...processTargets(rows, subject.label, baseline.label, 500),
      ],
    };
  } finally {
    await Promise.all([subject.stop(), baseline.stop()]);
  }
}
