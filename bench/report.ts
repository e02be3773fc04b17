import { spawnSync } from 'node:child_process';
import { cpus, release, totalmem } from 'node:os';
import type { LoadAverage } from './load-average.js';
import type { Row, RunSettings } from './measure.js';
import type { ScenarioId } from './scenario-ids.js';
import type { FloodRow } from './scenarios/flood.js';
import type { SizeRow } from './scenarios/size.js';
import type { TargetCheck } from './targets.js';

/** One scenario's figures as `npm run bench` writes them to bench/results/<scenario>.json. */
export interface ScenarioResults {
  scenario: ScenarioId;
  date: string;
  command: string;
  machine: Record<string, string | number>;
  /** The 1-minute load average over the scenario; null in files written before the bench recorded it. */
  load: LoadAverage | null;
  settings: RunSettings;
  rows: Row[];
  sizeRows: SizeRow[];
  floodRows: FloodRow[];
  targets: TargetCheck[];
}

/** What the figures depend on, recorded beside them. */
export function describeMachine(loadGenerator: string): Record<string, string | number> {
  // First line of a tool's version output, wherever it writes it (nginx -v: stderr; wrk -v exits 1).
  const version = (command: string, args: string[]): string => {
    const result = spawnSync(command, args, { encoding: 'utf8' });
    if (result.error !== undefined) return 'not installed';
    return `${result.stdout}${result.stderr}`.split('\n')[0]?.trim() ?? '';
  };
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGb: Math.round(totalmem() / 2 ** 30),
    kernel: release(),
    node: process.version,
    loadGenerator:
      loadGenerator === 'wrk' ? version('wrk', ['-v']) : version(process.execPath, ['node_modules/autocannon/autocannon.js', '--version']),
    nginx: version('nginx', ['-v']),
  };
}

export const fixed = (value: number, digits: number): string => (Number.isFinite(value) ? value.toFixed(digits) : '-');

/** The table as Markdown: readable in a terminal, and docs/performance.md's tables (bench/performance-page.ts). */
export function formatTable(rows: Row[]): string {
  const lines = [
    '| Scenario | Route | Server | req/s | vs baseline | p50 ms | p99 ms | errors | CPU µs/req | CPU % | RSS MB | start-up ms |',
    '|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  for (const r of rows) {
    const ratio = r.label === r.baseline ? `(${r.baseline})` : fixed(r.ratio, 2);
    lines.push(
      `| ${r.scenario} | ${r.route} | ${r.label} | ${Math.round(r.requestsPerSecond)} | ${ratio} | ${fixed(r.p50Ms, 2)} | ${fixed(r.p99Ms, 2)} | ${r.errors} | ${fixed(r.cpuUsPerRequest, 1)} | ${fixed(r.serverCpuPercent, 0)} | ${fixed(r.rssMb, 0)} | ${fixed(r.startupMs, 0)} |`,
    );
  }
  return lines.join('\n');
}

/** The size scenario's table: one line per size and server; two processes (C) as `frontend / backend`. */
export function formatSizeTable(rows: SizeRow[]): string {
  const lines = [
    '| Users | Server | Runs | Answer | Rows | Body MB | TTFB ms | Total s | MB/s | vs export | µs/row | CPU µs/row | Peak RSS MB |',
    '|--:|---|---|---|--:|--:|--:|--:|--:|--:|--:|--:|--:|',
  ];
  const each = (values: number[], digits: number): string => (values.length === 0 ? '-' : values.map((v) => fixed(v, digits)).join(' / '));
  for (const r of rows) {
    const statuses = r.statuses.map((status) => (r.export === undefined ? `exit ${status}` : String(status))).join(', ');
    const answer = r.complete ? `${statuses}, complete` : `INCOMPLETE (${r.problem ?? ''})`;
    const vs = r.export === undefined ? '(export)' : fixed(r.vsExport, 2);
    lines.push(
      `| ${r.users.toLocaleString('en-US')} | ${r.server} | ${r.detail} | ${answer} | ${r.rows} | ${fixed(r.bytes / 1e6, 1)} | ${fixed(r.ttfbMs, 1)} | ${fixed(r.totalMs / 1000, 3)} | ${fixed(r.mbPerSecond, 1)} | ${vs} | ${fixed(r.usPerRow, 2)} | ${each(r.cpuUsPerRow, 2)} | ${each(r.peakRssMb, 0)} |`,
    );
  }
  return lines.join('\n');
}

export function formatTargets(targets: TargetCheck[]): string {
  return targets
    .map((t) => {
      const line = `- ${t.met ? 'met   ' : 'MISSED'} ${t.name}: ${fixed(t.actual, 2)} (${t.comparison} ${t.limit})`;
      return t.met || t.whyMissed === undefined ? line : `${line}. Why: ${t.whyMissed}`;
    })
    .join('\n');
}
