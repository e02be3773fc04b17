/**
 * docs/performance.md, rendered from bench/results/<scenario>.json (`npm run bench:report`): the
 * method in a few lines of prose, then every figure from the files, none written by hand.
 * test/consistency/performance-page.test.ts fails when the page is not what the files render.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { format, resolveConfig } from 'prettier';
import { formatSizeTable, formatTable, formatTargets, type ScenarioResults } from './report.js';
import { scenarioIds, type ScenarioId } from './scenario-ids.js';
import { formatFloodTable } from './scenarios/flood.js';
import { expressApp, idiomaticApp, idiomaticProxy, startupTargetName } from './targets.js';

export const pagePath = 'docs/performance.md';

/** Each scenario's heading and what it sets side by side (bench/README.md has the whole method). */
const about: Record<ScenarioId, { title: string; compares: string }> = {
  a: {
    title: 'Variant A',
    compares:
      '`GET /`, `GET /api/users` and `GET /health` of variant A, with metrics, with `METRICS=off` and on Node’s defaults (no young-generation cap), beside the same app as a copier would write it on Fastify (the idiomatic app: response schemas, `@fastify/cors`, request ids, prom-client), as the original served it on Express, and bare `node:http` returning the same bytes (the floor, without a target).',
  },
  proxy: {
    title: 'The reverse proxy',
    compares:
      'The TypeScript proxy (as the image runs it and on Node’s defaults) in front of a bare upstream, beside tuned nginx, nginx as deployed, `http-proxy`, `@fastify/http-proxy` with its README’s defaults and as a copier would write it (nginx’s headers, request ids, prom-client), a bare `node:http` + undici relay and the upstream loaded directly.',
  },
  b: {
    title: 'Variant B',
    compares:
      'The list of 100 users, create and health of variant B on PostgreSQL and on SQLite, beside bare `node:http` with the same driver running the same queries.',
  },
  c: {
    title: 'Variant C',
    compares:
      'The backend on PostgreSQL beside bare `node:http` + pg; the frontend in front of a backend beside a bare `node:http` + undici relay.',
  },
  size: {
    title: 'The whole list at size',
    compares:
      'Every user listed at each size, B on both databases and C, beside the databases’ own exports of the same rows (`psql` `COPY` of `row_to_json`, `sqlite3 -json`).',
  },
  flood: {
    title: 'Floods',
    compares:
      'Tens of thousands of connections at once against each service with and without its connection cap, with `/health` probed throughout ([floods.md](floods.md)).',
  },
  traces: {
    title: 'Traces',
    compares:
      'A and the TypeScript proxy with tracing off, on (every trace sampled) and on at 1%, exporting to a sink, beside bare `node:http` and a bare undici relay in the same rounds ([observability-traces.md](observability-traces.md)).',
  },
};

/** Whether a results file holds what a target needs: a contender's rows, or a target by a part of its name. */
type Holds = (results: ScenarioResults) => boolean;
const rowsOf =
  (label: string): Holds =>
  (results) =>
    results.rows.some((row) => row.label === label);
const targetNamed =
  (part: string): Holds =>
  (results) =>
    results.targets.some((target) => target.name.includes(part));

/**
 * What issue 42's targets need of each scenario's file. A file written by an earlier run lacks it; the
 * page then says it is not measured yet, where a later run's figures will stand, rather than a figure.
 */
const needed: Partial<Record<ScenarioId, { what: string; holds: Holds }[]>> = {
  a: [
    { what: `${idiomaticApp}: A’s CPU µs per request, RSS with no V8 flag and start-up against it`, holds: rowsOf(idiomaticApp) },
    { what: `${expressApp}: A’s req/s against it`, holds: rowsOf(expressApp) },
  ],
  proxy: [
    { what: `${idiomaticProxy}: the proxy’s CPU µs per request against it`, holds: rowsOf(idiomaticProxy) },
    { what: `the proxy’s start-up against the ${idiomaticApp} app’s`, holds: targetNamed(startupTargetName) },
  ],
  b: [
    { what: `each store’s start-up against the ${idiomaticApp} app’s`, holds: targetNamed(startupTargetName) },
    {
      what: 'durable SQLite creates against bare better-sqlite3 with synchronous=NORMAL, at least 0.5',
      holds: targetNamed('B SQLite durable create'),
    },
  ],
  c: [
    {
      what: 'the frontend’s forwarded list: CPU µs per request against the bare relay’s',
      holds: targetNamed('C frontend list: CPU µs per request'),
    },
    { what: `the backend’s and frontend’s start-up against the ${idiomaticApp} app’s`, holds: targetNamed(startupTargetName) },
  ],
};

/** The committed results files (bench/results/<scenario>.json), in the suite's scenario order. */
export function readResults(resultsDir: string): ScenarioResults[] {
  const present = new Set(readdirSync(resultsDir));
  return scenarioIds
    .filter((id) => present.has(`${id}.json`))
    .map((id) => JSON.parse(readFileSync(join(resultsDir, `${id}.json`), 'utf8')) as ScenarioResults);
}

function provenance(results: ScenarioResults): string {
  const { machine, settings, load } = results;
  const when = `${results.date.slice(0, 16).replace('T', ' ')} UTC`;
  const rounds = `rounds: ${settings.rounds} of ${settings.load.durationSeconds} s, ${settings.load.connections} connections, ${settings.load.tool}`;
  const loadAverage = load === null ? 'not recorded in this file' : `${load.min}-${load.max}`;
  return [
    `- Run: \`${results.command}\`, ${when}; ${rounds}`,
    `- Machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGb} GB, Linux ${machine.kernel}, Node ${machine.node}, ${machine.nginx}`,
    `- Load average (1 min) during the scenario: ${loadAverage}`,
  ].join('\n');
}

/** Issue 42's targets this file holds no figures for, each marked "not measured yet". */
function notMeasured(results: ScenarioResults): string[] {
  const missing = (needed[results.scenario] ?? []).filter(({ holds }) => !holds(results));
  if (missing.length === 0) return [];
  return [`Issue 42’s targets this run predates:\n\n${missing.map(({ what }) => `- not measured yet: ${what}`).join('\n')}`];
}

function section(results: ScenarioResults): string {
  const { title, compares } = about[results.scenario];
  const tables = [
    ...(results.rows.length > 0 ? [formatTable(results.rows)] : []),
    ...(results.sizeRows.length > 0 ? [formatSizeTable(results.sizeRows)] : []),
    ...(results.floodRows.length > 0 ? [formatFloodTable(results.floodRows)] : []),
  ];
  return [
    `## ${title}`,
    `${compares} From \`bench/results/${results.scenario}.json\`; again with \`npm run bench -- --only ${results.scenario}\`.`,
    provenance(results),
    ...tables,
    `Targets, checked by the run itself:\n\n${formatTargets(results.targets)}`,
    ...notMeasured(results),
  ].join('\n\n');
}

/** The whole page, formatted as the repository's Prettier settings format Markdown. */
export async function renderPerformancePage(results: ScenarioResults[], repoRoot: string): Promise<string> {
  const page = [
    '# Performance',
    '<!-- Generated by `npm run bench:report` from bench/results/*.json: edit bench/performance-page.ts or run the bench, not this page. -->',
    'Every service runs as a production process and is loaded beside a baseline measured in the same run: the bare ' +
      '`node:http` server, the bare database drivers, tuned nginx, the Node proxies a user would reach for. A ratio is ' +
      'the median of per-round ratios between runs back to back, so a machine that slows down between rounds cancels ' +
      'out; CPU µs per request barely moves with other work on the machine, and a CPU share well under 100% means the ' +
      'server was not the bottleneck. Read every table against its load average: the server under test and the load ' +
      'generator alone keep two cores busy. How it measures: [bench/README.md](../bench/README.md); what makes the ' +
      'services fast, and why each trick stays: [architecture.md](architecture.md#the-speed-tricks-and-why-each-stays).',
    ...results.map(section),
  ].join('\n\n');
  const options = (await resolveConfig(join(repoRoot, pagePath))) ?? {};
  return format(page, { ...options, parser: 'markdown' });
}
