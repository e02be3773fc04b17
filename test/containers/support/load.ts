import { Agent, request } from 'node:http';

/** What a load run saw: every request, its failures by kind, and which replica answered. */
export interface LoadReport {
  requests: number;
  ok: number;
  /** Non-2xx answers as `status 502`, connection errors by code (`ECONNRESET`), and `timeout`. */
  failures: Record<string, number>;
  failed: number;
  /** Per replica named in a 2xx body: how many it answered and when (ms since epoch) it first did. */
  replicas: Map<string, { count: number; first: number }>;
  /** End time (ms since epoch) of every 2xx answer, and of every failure, in order. */
  successes: number[];
  failureTimes: number[];
  durationMs: number;
}

export interface LoadOptions {
  /** Client loops, each with one request in flight at a time. */
  loops?: number;
  /** A request with no complete answer after this long counts as a `timeout` failure. */
  timeoutMs?: number;
  /** Names the replica that wrote a 2xx body (e.g. variant A's `hostname`), or undefined. */
  replicaOf?: (body: string) => string | undefined;
}

export interface Load {
  /** The report so far, updated as answers come in. */
  readonly report: LoadReport;
  /** Stops the loops after their requests in flight and reports. */
  stop: () => Promise<LoadReport>;
}

interface Outcome {
  status?: number;
  body?: string;
  error?: string;
}

/** One GET on a keep-alive agent; never rejects. The timer covers the whole exchange, body included. */
function get(url: string, agent: Agent, timeoutMs: number): Promise<Outcome> {
  return new Promise((resolve) => {
    let done = false;
    const finish = (outcome: Outcome): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve(outcome);
    };
    const req = request(url, { agent }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => finish({ status: res.statusCode ?? 0, body }));
      res.on('error', (error: NodeJS.ErrnoException) => finish({ error: error.code ?? error.message }));
    });
    const timer = setTimeout(() => {
      finish({ error: 'timeout' });
      req.destroy();
    }, timeoutMs);
    req.on('error', (error: NodeJS.ErrnoException) => finish({ error: error.code ?? error.message }));
    req.end();
  });
}

/**
 * Client loops sending GET `url` back to back from now until stop(), as users would during an
 * operation: every answer that is not 2xx, every connection error and every timeout is a failure.
 * The client keeps its connections to the proxy alive, so what fails is the proxy's forwarding.
 */
export function startLoad(url: string, options: LoadOptions = {}): Load {
  const { loops = 4, timeoutMs = 10_000, replicaOf } = options;
  const agent = new Agent({ keepAlive: true, maxSockets: loops });
  const report: LoadReport = {
    requests: 0,
    ok: 0,
    failures: {},
    failed: 0,
    replicas: new Map(),
    successes: [],
    failureTimes: [],
    durationMs: 0,
  };
  const started = performance.now();
  let running = true;

  const record = (outcome: Outcome): void => {
    const at = Date.now();
    report.requests += 1;
    if (outcome.status !== undefined && outcome.status >= 200 && outcome.status < 300) {
      report.ok += 1;
      report.successes.push(at);
      const replica = replicaOf?.(outcome.body ?? '');
      if (replica !== undefined) {
        const seen = report.replicas.get(replica);
        if (seen) seen.count += 1;
        else report.replicas.set(replica, { count: 1, first: at });
      }
      return;
    }
    const kind = outcome.error ?? `status ${outcome.status}`;
    report.failures[kind] = (report.failures[kind] ?? 0) + 1;
    report.failed += 1;
    report.failureTimes.push(at);
  };

  const loop = async (): Promise<void> => {
    while (running) record(await get(url, agent, timeoutMs));
  };
  const loopsDone = Promise.all(Array.from({ length: loops }, loop));

  return {
    report,
    stop: async () => {
      running = false;
      await loopsDone;
      agent.destroy();
      report.durationMs = performance.now() - started;
      return report;
    },
  };
}

/** One line for the test output, to be quoted: requests, failures by kind, duration, answers per replica. */
export function summary(label: string, report: LoadReport): string {
  const failures = Object.entries(report.failures)
    .map(([kind, count]) => `${kind}: ${count}`)
    .join(', ');
  const replicas = [...report.replicas.values()].map((r) => r.count).join('/');
  return (
    `${label}: ${report.requests} requests, ${report.failed} failed${failures ? ` (${failures})` : ''} in ` +
    `${(report.durationMs / 1000).toFixed(1)} s` +
    (replicas ? `, answers per replica ${replicas}` : '')
  );
}

/**
 * Loads every target at once (each with its own loops) for a second, during `operation`, then
 * for `settleMs` more (an address a proxy still holds would fail then), and logs a summary line
 * per target. `operation` sees the reports as they grow, e.g. to wait until every replica answered.
 */
export async function underLoad<K extends string>(
  targets: Record<K, string>,
  label: string,
  operation: (live: Record<K, LoadReport>) => Promise<void>,
  options: LoadOptions & { settleMs?: number } = {},
): Promise<Record<K, LoadReport>> {
  const names = Object.keys(targets) as K[];
  const loads = names.map((name) => startLoad(targets[name], options));
  const byName = <T>(values: T[]): Record<K, T> => Object.fromEntries(names.map((name, i) => [name, values[i]])) as Record<K, T>;
  await sleep(1_000);
  const started = performance.now();
  try {
    await operation(byName(loads.map((load) => load.report)));
  } finally {
    const took = ((performance.now() - started) / 1000).toFixed(1);
    await sleep(options.settleMs ?? 3_000);
    const reports = await Promise.all(loads.map((load) => load.stop()));
    names.forEach((name, i) => console.log(summary(`${label} through ${name} (operation ${took} s)`, reports[i] as LoadReport)));
  }
  return byName(loads.map((load) => load.report));
}

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
