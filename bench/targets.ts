import { median, type Row } from './measure.js';
import type { SizeRow } from './scenarios/size.js';

/** One target of the issue, checked against this run's figures. */
export interface TargetCheck {
  name: string;
  actual: number;
  comparison: 'at least' | 'at most';
  limit: number;
  met: boolean;
  /** What keeps the target out of reach when it is missed, known from measurements: the page prints it beside a miss. */
  whyMissed?: string;
}

export interface ScenarioResult {
  rows: Row[];
  targets: TargetCheck[];
  /** The size scenario's whole-list readings (a table of their own). */
  sizeRows?: SizeRow[];
}

export function atLeast(name: string, actual: number, limit: number, whyMissed?: string): TargetCheck {
  return { name, actual, comparison: 'at least', limit, met: actual >= limit, ...(whyMissed !== undefined && { whyMissed }) };
}

export function atMost(name: string, actual: number, limit: number, whyMissed?: string): TargetCheck {
  return { name, actual, comparison: 'at most', limit, met: actual <= limit, ...(whyMissed !== undefined && { whyMissed }) };
}

export function rowOf(rows: Row[], route: string, label: string): Row {
  const row = rows.find((r) => r.route === route && r.label === label);
  if (row === undefined) throw new Error(`no figures for ${label} on ${route}`);
  return row;
}

/** Throughput of a subject as a share of the baseline it was measured against, round by round. */
export function throughputRatio(rows: Row[], route: string, subject: string, baseline: string): number {
  const row = rowOf(rows, route, subject);
  if (row.baseline !== baseline) throw new Error(`${subject} on ${route} was measured against ${row.baseline}, not ${baseline}`);
  return row.ratio;
}

type Figure = (round: Row['rounds'][number]) => number;

/** Round by round, one figure of a subject over another contender's on the same route. */
function roundByRound(rows: Row[], route: string, subject: string, other: string, figure: Figure): number[] {
  const theirs = rowOf(rows, route, other).rounds;
  return rowOf(rows, route, subject).rounds.map(
    (r, round) => figure(r) / (theirs[round] === undefined ? Number.NaN : figure(theirs[round])),
  );
}

/** The median of the per-round ratios of one figure of a subject to another contender's on the same route. */
function perRoundRatio(rows: Row[], route: string, subject: string, other: string, figure: Figure): number {
  return median(roundByRound(rows, route, subject, other, figure));
}

/**
 * Throughput of a subject over another contender of the same route (not the route's baseline),
 * the median of the per-round ratios: each round measures every contender back to back.
 */
export function roundRatio(rows: Row[], route: string, subject: string, other: string): number {
  return perRoundRatio(rows, route, subject, other, (r) => r.requestsPerSecond);
}

/**
 * Server CPU time per request of a subject over another's, the median of the per-round ratios: on a
 * shared 2-core machine it moves far less than req/s from one run to the next.
 */
export function cpuRatio(rows: Row[], route: string, subject: string, other: string): number {
  return perRoundRatio(rows, route, subject, other, (r) => r.cpuUsPerRequest);
}

/**
 * Server CPU time per request of a subject over another's, the median of the per-round ratios of
 * several routes pooled: one figure for a service, from as many round pairs as its routes give.
 */
export function pooledCpuRatio(rows: Row[], routes: string[], subject: string, other: string): number {
  return median(routes.flatMap((route) => roundByRound(rows, route, subject, other, (r) => r.cpuUsPerRequest)));
}

/** p99 latency of a subject over another's, the median of the per-round ratios. */
export function p99Ratio(rows: Row[], route: string, subject: string, other: string): number {
  return perRoundRatio(rows, route, subject, other, (r) => r.p99Ms);
}

/**
 * What a feature costs in throughput ratio points: per round, the ratio to the baseline of the
 * contender without it minus that of the contender with it, times 100; the median over the rounds.
 * All three are measured back to back in each round, so a slowdown between rounds cancels out.
 */
export function ratioDropPoints(rows: Row[], route: string, withFeature: string, without: string, baseline: string): number {
  const rounds = (label: string): Row['rounds'] => rowOf(rows, route, label).rounds;
  const [on, off, base] = [rounds(withFeature), rounds(without), rounds(baseline)];
  return median(
    base.map(
      (b, round) =>
        (100 * ((off[round]?.requestsPerSecond ?? Number.NaN) - (on[round]?.requestsPerSecond ?? Number.NaN))) / b.requestsPerSecond,
    ),
  );
}

/** Issue 42's baseline: variant A as a copier would write it on Fastify (bench/baselines/idiomatic-simple.ts). */
export const idiomaticApp = 'idiomatic Fastify';
/** Issue 42's baseline: variant A as the original served it, on Express (bench/baselines/express-simple.ts). */
export const expressApp = 'Express';
/** Issue 42's baseline: the proxy as a copier would write it (bench/baselines/idiomatic-proxy.ts). */
export const idiomaticProxy = 'idiomatic @fastify/http-proxy';
/** How every service's start-up target is named, after the service's label. */
export const startupTargetName = `start-up to healthy, unpinned / ${idiomaticApp}'s`;

/** A contender's RSS after load: the largest of its rows' readings. */
export const rssAfterLoad = (rows: Row[], label: string): number => Math.max(...rows.filter((r) => r.label === label).map((r) => r.rssMb));

/**
 * Issue 42: a service's RSS after load at most this multiple of each baseline it is measured against,
 * but for bare node:http (the floor, without a target) and for the idiomatic app (variant A's own, 1.1).
 */
const rssLimitRatio = 1.3;
/** Issue 42: start-up to healthy (unpinned, median of five) at most this multiple of the idiomatic app's. */
const startupLimitRatio = 1.2;

/**
 * The targets every service shares: no errors under load, its own or its baselines' (a baseline that
 * answers errors does other work, and every ratio against it is void), RSS after load against each of its baselines'
 * (`baselines`, read from the same rows), and start-up to healthy against the idiomatic app's,
 * timed in the same turns (startMeasured). `rssWhyMissed`: what the service's design adds to its
 * memory, where that is known.
 */
export function processTargets(
  rows: Row[],
  subject: string,
  baselines: string[],
  startup: { subjectMs: number; idiomaticMs: number },
  rssWhyMissed?: string,
): TargetCheck[] {
  const errors = (labels: string[]): number => rows.filter((r) => labels.includes(r.label)).reduce((sum, r) => sum + r.errors, 0);
  return [
    atMost(`${subject}: errors under load`, errors([subject]), 0),
    atMost(`${subject}: errors under load of its baselines (${baselines.join(', ')})`, errors(baselines), 0),
    ...baselines.map((baseline) =>
      atMost(
        `${subject}: RSS after load / ${baseline}'s`,
        rssAfterLoad(rows, subject) / rssAfterLoad(rows, baseline),
        rssLimitRatio,
        rssWhyMissed,
      ),
    ),
    atMost(`${subject}: ${startupTargetName}`, startup.subjectMs / startup.idiomaticMs, startupLimitRatio),
  ];
}
