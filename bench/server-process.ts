import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { startedLine, type ServiceName } from '@sample-services/manifest';
import { startListeningProcess } from '@sample-services/processes/listening-process';
import { serviceCommand } from '@sample-services/testing/service-process';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export interface ServerSpec {
  /** Shown in the table, e.g. `simple` or `bare node:http`. */
  label: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Where it listens when fixed (nginx); otherwise PORT=0 and the port is read from the JSON start-up line. */
  port?: number;
  /** The start-up line's message for a port, when known (a service's, from the manifest). */
  startedMessage?: (port: number) => string;
  /** CPU list for taskset, e.g. "0"; undefined runs unpinned. */
  cpus?: string | undefined;
}

export interface ServerProcess {
  label: string;
  pid: number;
  baseUrl: string;
  /** From spawn to the first 200 answer of GET /health. */
  startupMs: number;
  /** Resident set size now, from /proc. */
  rssBytes: () => number;
  /** Peak resident set size since the process started (VmHWM), from /proc. */
  peakRssBytes: () => number;
  /** CPU time used so far by the process and its children (nginx's worker), from /proc. */
  cpuSeconds: () => number;
  stop: () => Promise<void>;
}

/** A Node program run as in production: NODE_ENV=production, info-level JSON logs. */
export function nodeServer(label: string, script: string, env: Record<string, string>, cpus: string | undefined): ServerSpec {
  return { label, command: process.execPath, args: [script], env: { NODE_ENV: 'production', ...env }, cpus };
}

/**
 * The Node options the services run with: none, as in the image. BENCH_SERVICE_NODE_OPTIONS sets
 * some, to measure what a setting costs.
 */
export function imageNodeOptions(): string {
  return process.env.BENCH_SERVICE_NODE_OPTIONS ?? '';
}

/**
 * A compiled service run as in production (the image's command and NODE_OPTIONS), its start-up line
 * checked against the manifest. The bare baselines (nodeServer) run with Node's defaults.
 */
export function serviceServer(label: string, service: ServiceName, env: Record<string, string>, cpus: string | undefined): ServerSpec {
  const nodeOptions = imageNodeOptions();
  const { args, env: serviceEnv } = serviceCommand(service);
  const production = { NODE_ENV: 'production', ...serviceEnv, ...(nodeOptions !== '' && { NODE_OPTIONS: nodeOptions }), ...env };
  return { label, command: process.execPath, args, env: production, cpus, startedMessage: (port) => startedLine(service, port) };
}

const clockTicks = 100; // USER_HZ, 100 on Linux

/** utime + stime of a process and of its live children, in seconds. */
function cpuSecondsOf(pid: number): number {
  const own = (id: string): number => {
    const fields = readFileSync(`/proc/${id}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
    return (Number(fields[11]) + Number(fields[12])) / clockTicks;
  };
  const children = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ').filter(Boolean);
  return own(String(pid)) + children.reduce((sum, child) => sum + own(child), 0);
}

/** A field of /proc/<pid>/status given in kB (VmRSS, VmHWM). */
function statusKb(pid: number, field: string): number {
  return Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
}

function healthStatus(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = request(url, { agent: false, timeout: 1_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(0));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

/**
 * Starts a server pinned with taskset (which execs, so the pid is the server's own), learns
 * its port, and polls /health every millisecond until it answers 200.
 */
export async function startServer(spec: ServerSpec, timeoutMs = 15_000): Promise<ServerProcess> {
  const [command, args] = spec.cpus === undefined ? [spec.command, spec.args] : ['taskset', ['-c', spec.cpus, spec.command, ...spec.args]];
  const started = performance.now();
  const server = await startListeningProcess({
    label: spec.label,
    command,
    args,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(spec.port ?? 0), ...spec.env },
    cwd: repoRoot,
    startedMessage: spec.startedMessage,
    port: spec.port,
    timeoutMs,
  });
  const fail = async (why: string): Promise<never> => {
    await server.stop('SIGKILL');
    throw new Error([`${spec.label} ${why}`, ...server.lines.slice(-20)].join('\n'));
  };
  let ended = false;
  void server.exited.then(() => (ended = true));
  for (;;) {
    if ((await healthStatus(`${server.baseUrl}/health`)) === 200) break;
    if (ended) await fail('exited before it was healthy');
    if (performance.now() - started > timeoutMs) await fail(`was not healthy in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const startupMs = performance.now() - started;
  const { pid } = server;

  return {
    label: spec.label,
    pid,
    baseUrl: server.baseUrl,
    startupMs,
    cpuSeconds: () => {
      try {
        return cpuSecondsOf(pid);
      } catch (error) {
        // A server that ended under load has no /proc entry left: name it, with its last lines, not just the file.
        const why = error instanceof Error ? error.message : String(error);
        throw new Error([`${spec.label} (pid ${pid}): ${why}`, ...server.lines.slice(-20)].join('\n'));
      }
    },
    rssBytes: () => statusKb(pid, 'VmRSS') * 1024,
    peakRssBytes: () => statusKb(pid, 'VmHWM') * 1024,
    stop: async () => {
      const timer = setTimeout(() => void server.stop('SIGKILL'), 5_000);
      await server.stop('SIGTERM');
      clearTimeout(timer);
    },
  };
}
