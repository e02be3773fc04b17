import { runLoad, type LoadRequest, type LoadResult, type LoadSettings } from './load-generator.js';
import { startServer, type ServerProcess, type ServerSpec } from './server-process.js';

export interface RunSettings {
  load: LoadSettings;
  rounds: number;
  warmupSeconds: number;
  /** How many fresh starts, unpinned, the start-up time is the median of. */
  startups: number;
  /** CPU lists: the server under test, and everything else (load generator, upstreams, database). */
  cpus: { server: string | undefined; other: string | undefined };
  /** Users in the table for the size scenario's whole-list readings. */
  sizes: number[];
}

/** What the load generator sends; every contender gets the same, at its own base URL. */
export interface Route {
  /** Shown in the table, e.g. `GET /api/users`. */
  name: string;
  path: string;
  method: LoadRequest['method'];
  body?: string;
  pauseMs?: number;
}

export const getRoute = (path: string): Route => ({ name: `GET ${path}`, path, method: 'GET' });

/** One round of one contender: the load generator's figures and the server's CPU use. */
export interface RoundResult extends LoadResult {
  /** Share of one core the server used; well below 100 means the server was not the bottleneck. */
  serverCpuPercent: number;
  /** Server CPU time per request: unlike req/s, hardly affected by other work on the machine. */
  cpuUsPerRequest: number;
}

/** One line of the table: the medians of one contender on one route. */
export interface Row {
  scenario: string;
  route: string;
  label: string;
  /** The route's baseline, which `ratio` is against. */
  baseline: string;
  requestsPerSecond: number;
  /** Req/s over the baseline's in the same round, median over the rounds: a round's pair is
   * measured back to back, so a slowdown of the machine between rounds cancels out. */
  ratio: number;
  p50Ms: number;
  p99Ms: number;
  errors: number;
  serverCpuPercent: number;
  cpuUsPerRequest: number;
  rssMb: number;
  startupMs: number;
  rounds: RoundResult[];
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[middle] ?? 0) : ((sorted[middle - 1] ?? 0) + (sorted[middle] ?? 0)) / 2;
}

/**
 * Start-up to healthy as issue 42 measures it: each server started `times` times unpinned (a process
 * starting while nothing else runs may use every core, as a container's does), one after the other in
 * each round and in the reverse order every other round, as the load rounds run, so that a drift of the
 * machine (the previous scenario's writes still flushing, a warming page cache) falls on all of them
 * alike; the median of those starts. Then each is started once more on its own cores (the spec's `cpus`)
 * for the load, and that start is not timed. A start that fails stops the ones running.
 */
export async function startMeasured<const Specs extends readonly ServerSpec[]>(
  specs: Specs,
  times: number,
): Promise<{ -readonly [K in keyof Specs]: ServerProcess }> {
  const startups = specs.map(() => [] as number[]);
  for (let round = 1; round <= times; round++) {
    const order = specs.map((_, i) => i);
    if (round % 2 === 0) order.reverse();
    for (const i of order) {
      const server = await startServer({ ...(specs[i] as ServerSpec), cpus: undefined });
      startups[i]?.push(server.startupMs);
      await server.stop();
    }
  }
  const running: ServerProcess[] = [];
  try {
    for (const spec of specs) running.push(await startServer(spec));
  } catch (error) {
    await Promise.all(running.map((server) => server.stop()));
    throw error;
  }
  // One server per spec, in the specs' order: the tuple the caller destructures.
  return running.map((server, i) => ({ ...server, startupMs: median(startups[i] ?? []) })) as {
    -readonly [K in keyof Specs]: ServerProcess;
  };
}

async function measureRound(
  server: ServerProcess,
  request: (server: ServerProcess) => LoadRequest,
  load: LoadSettings,
): Promise<RoundResult> {
  const cpuBefore = server.cpuSeconds();
  const result = await runLoad(request(server), load);
  const cpu = server.cpuSeconds() - cpuBefore;
  return {
    ...result,
    serverCpuPercent: (100 * cpu) / load.durationSeconds,
    cpuUsPerRequest: (1e6 * cpu) / (result.requestsPerSecond * load.durationSeconds),
  };
}

/**
 * Loads each contender in turn, round after round, reversing the order every round so that
 * drift in the machine's speed (other work, thermal) hits them alike; reports medians.
 * The first round is preceded by a warm-up of each contender, so the JIT has settled.
 * The last contender is the baseline the others' throughput ratios are against.
 */
export async function measureRoute(scenario: string, route: Route, contenders: ServerProcess[], settings: RunSettings): Promise<Row[]> {
  const results = contenders.map(() => [] as RoundResult[]);
  const request = (server: ServerProcess): LoadRequest => ({
    url: server.baseUrl + route.path,
    method: route.method,
    body: route.body,
    pauseMs: route.pauseMs,
  });
  if (settings.warmupSeconds > 0) {
    for (const contender of contenders) {
      await runLoad(request(contender), { ...settings.load, durationSeconds: settings.warmupSeconds });
    }
  }
  for (let round = 0; round < settings.rounds; round++) {
    const order = contenders.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      results[i]?.push(await measureRound(contenders[i] as ServerProcess, request, settings.load));
    }
  }
  const baseline = contenders[contenders.length - 1] as ServerProcess;
  const baselineRounds = results[contenders.length - 1] ?? [];
  return contenders.map((contender, i) => {
    const rounds = results[i] ?? [];
    return {
      scenario,
      route: route.name,
      label: contender.label,
      baseline: baseline.label,
      requestsPerSecond: median(rounds.map((r) => r.requestsPerSecond)),
      ratio: median(rounds.map((r, round) => r.requestsPerSecond / (baselineRounds[round]?.requestsPerSecond ?? Number.NaN))),
      p50Ms: median(rounds.map((r) => r.p50Ms)),
      p99Ms: median(rounds.map((r) => r.p99Ms)),
      errors: rounds.reduce((sum, r) => sum + r.errors, 0),
      serverCpuPercent: median(rounds.map((r) => r.serverCpuPercent)),
      cpuUsPerRequest: median(rounds.map((r) => r.cpuUsPerRequest)),
      rssMb: contender.rssBytes() / 2 ** 20,
      startupMs: contender.startupMs,
      rounds,
    };
  });
}
