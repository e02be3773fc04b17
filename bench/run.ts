/**
 * The benchmark suite (`npm run bench -- [options]`): each service as a production process
 * beside a baseline measured in the same run, on a pinned core (method: bench/README.md).
 * Each scenario's figures go to bench/results/<scenario>.json with the date, machine and load
 * average; `npm run bench:report` renders docs/performance.md from those files. Options:
 *   --only a,proxy,b,c,size,flood,traces   scenarios to run (default all)
 *   --quick                   a smoke run: one 1 s round per server and route, no warm-up (default: rounds of 3 s,
 *                             five, or a scenario's own count in roundsByScenario)
 *   --local                   results to bench/results/*.local.json (git-ignored), as --quick's go: a trial of a
 *                             few full-length rounds that must not replace the committed figures
 *   --duration S --rounds N --connections C --loadgen wrk|autocannon
 *   --sizes 10000,100000,1000000   users in the table for the size scenario (default these)
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { defaultLoadGenerator, type LoadGeneratorName } from './load-generator.js';
import type { Row, RunSettings } from './measure.js';
import { sampleLoadAverage } from './load-average.js';
import { describeMachine, formatSizeTable, formatTable, formatTargets, type ScenarioResults } from './report.js';
import { scenarioIds, type ScenarioId } from './scenario-ids.js';
import type { TestPostgres } from '@sample-services/testing/postgres';
import { benchPostgres } from './postgres.js';
import { runDatabase } from './scenarios/database.js';
import { formatFloodTable, runFlood, type FloodRow } from './scenarios/flood.js';
import { runProxy } from './scenarios/proxy.js';
import { runSimple } from './scenarios/simple.js';
import { defaultSizes, runSize, type SizeRow } from './scenarios/size.js';
import { runTraces } from './scenarios/traces.js';
import { runTwoTier } from './scenarios/two-tier.js';
import { repoRoot } from './server-process.js';
import type { ScenarioResult, TargetCheck } from './targets.js';

type Scenario = (
  settings: RunSettings,
  postgres: () => Promise<TestPostgres | undefined>,
) => Promise<ScenarioResult & { floodRows?: FloodRow[] }>;

const scenarios: Record<ScenarioId, Scenario> = {
  a: runSimple,
  proxy: runProxy,
  b: runDatabase,
  c: runTwoTier,
  size: runSize,
  flood: runFlood,
  traces: runTraces,
};

const { values } = parseArgs({
  options: {
    only: { type: 'string' },
    quick: { type: 'boolean', default: false },
    local: { type: 'boolean', default: false },
    duration: { type: 'string' },
    rounds: { type: 'string' },
    connections: { type: 'string' },
    loadgen: { type: 'string' },
    sizes: { type: 'string' },
  },
});

function count(option: string, value: string | undefined, fallback: number): number {
  const n = value === undefined ? fallback : Number(value);
  if (Number.isInteger(n) && n >= 1) return n;
  process.stderr.write(`bench: --${option} must be a whole number of at least 1, got "${value}"\n`);
  process.exit(2);
}

const isScenarioId = (id: string): id is ScenarioId => (scenarioIds as readonly string[]).includes(id);
const requested = values.only?.split(',').map((s) => s.trim().toLowerCase()) ?? [...scenarioIds];
const unknown = requested.filter((id) => !isScenarioId(id));
if (unknown.length > 0) {
  process.stderr.write(`bench: unknown scenario ${unknown.join(', ')}; choose from ${scenarioIds.join(', ')}\n`);
  process.exit(2);
}
const selected = requested.filter(isScenarioId);
const loadGenerator = (values.loadgen ?? defaultLoadGenerator()) as LoadGeneratorName;
// With two or more cores the server under test gets core 0 to itself and everything else
// (load generator, upstream, database) runs on the others; on one core nothing is pinned.
const coreCount = cpus().length;
const pinning = coreCount >= 2 ? { server: '0', other: `1-${coreCount - 1}` } : { server: undefined, other: undefined };
const settings: RunSettings = {
  load: {
    tool: loadGenerator,
    connections: count('connections', values.connections, 50),
    durationSeconds: count('duration', values.duration, values.quick ? 1 : 3),
    cpus: pinning.other,
  },
  rounds: count('rounds', values.rounds, values.quick ? 1 : 5),
  warmupSeconds: values.quick ? 0 : 2,
  startups: values.quick ? 1 : 5,
  cpus: pinning,
  sizes: values.sizes?.split(',').map((s, i) => count(`sizes (item ${i + 1})`, s.trim(), 1)) ?? defaultSizes,
};

// Where a target sits within the spread of five rounds, more rounds (unless --rounds says otherwise):
// A's CPU per request and metrics cost, the proxy against nginx, whose rounds on these 2-core machines
// swing by a third and more (bench/README.md, "Rounds").
const roundsByScenario: Partial<Record<ScenarioId, number>> = { a: 11, proxy: 9 };
const settingsFor = (id: ScenarioId): RunSettings =>
  values.quick || values.rounds !== undefined ? settings : { ...settings, rounds: roundsByScenario[id] ?? settings.rounds };

// One PostgreSQL cluster for the scenarios that need it, started on first use.
let postgres: Promise<TestPostgres | undefined> | undefined;
const usePostgres = (): Promise<TestPostgres | undefined> => (postgres ??= benchPostgres(pinning.other));

const machine = describeMachine(loadGenerator);
const command = ['npm run bench', ...(process.argv.length > 2 ? ['--', ...process.argv.slice(2)] : [])].join(' ');
const resultsDir = join(repoRoot, 'bench/results');
mkdirSync(resultsDir, { recursive: true });
const rows: Row[] = [];
const sizeRows: SizeRow[] = [];
const floodRows: FloodRow[] = [];
const targets: TargetCheck[] = [];
const written: string[] = [];
// A scenario that fails (a service that does not start) is reported; the others still run.
const failures: { scenario: string; error: string }[] = [];
try {
  for (const id of selected) {
    process.stderr.write(`bench: scenario ${id}...\n`);
    const started = new Date().toISOString();
    const load = sampleLoadAverage();
    try {
      const scenarioSettings = settingsFor(id);
      const result = await scenarios[id](scenarioSettings, usePostgres);
      const results: ScenarioResults = {
        scenario: id,
        date: started,
        command,
        machine,
        load: load.stop(),
        settings: scenarioSettings,
        rows: result.rows,
        sizeRows: result.sizeRows ?? [],
        floodRows: result.floodRows ?? [],
        targets: result.targets,
      };
      // A scenario's committed figures (docs/performance.md's source) come from full-length runs; quick and local ones stay local (git-ignored).
      const local = values.quick || values.local;
      const file = join(resultsDir, local ? `${id}-${started.replace(/[:.]/g, '-')}.local.json` : `${id}.json`);
      writeFileSync(file, `${JSON.stringify(results, null, 2)}\n`);
      written.push(file);
      rows.push(...results.rows);
      sizeRows.push(...results.sizeRows);
      floodRows.push(...results.floodRows);
      targets.push(...results.targets);
    } catch (error) {
      load.stop();
      failures.push({ scenario: id, error: error instanceof Error ? error.message : String(error) });
      process.stderr.write(`bench: scenario ${id} failed: ${error instanceof Error ? error.stack : String(error)}\n`);
    }
  }
} finally {
  await (await postgres)?.destroy();
}

const tables = [
  ...(rows.length > 0 ? [formatTable(rows)] : []),
  ...(sizeRows.length > 0 ? [formatSizeTable(sizeRows)] : []),
  ...(floodRows.length > 0 ? [formatFloodTable(floodRows)] : []),
];
process.stdout.write(`\n${tables.join('\n\n')}\n\nTargets:\n${formatTargets(targets)}\n\n`);
process.stdout.write(
  `Machine: ${Object.entries(machine)
    .map(([k, v]) => `${k} ${v}`)
    .join('; ')}\nWritten to ${written.join(', ')}; npm run bench:report renders docs/performance.md from bench/results/*.json\n`,
);
if (failures.length > 0) {
  process.stdout.write(`Failed: ${failures.map((f) => `${f.scenario} (${f.error.split('\n')[0]})`).join('; ')}\n`);
  process.exitCode = 1;
}
