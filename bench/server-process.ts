import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { performance } from 'node:perf_hooks';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export interface ServerSpec {
  /** Shown in the table, e.g. `simple` or `bare node:http`. */
  label: string;
  command: string;
  args: string[];
  env?: Record<string, string>;
  /** Where it listens when fixed (nginx); otherwise PORT=0 and the port is read from the start-up line. */
  port?: number;
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
  /** CPU time used so far by the process and its children (nginx's worker), from /proc. */
  cpuSeconds: () => number;
  stop: () => Promise<void>;
}

/** Node services run as in production: NODE_ENV=production, info-level JSON logs. */
export function nodeServer(label: string, script: string, env: Record<string, string>, cpus: string | undefined): ServerSpec {
  return { label, command: process.execPath, args: [script], env: { NODE_ENV: 'production', ...env }, cpus };
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
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(spec.port ?? 0), ...spec.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output: string[] = [];
  const exited = once(child, 'exit');
  createInterface({ input: child.stderr }).on('line', (line) => output.push(line));
  const lines = createInterface({ input: child.stdout });
  if (spec.port !== undefined) lines.on('line', (line) => output.push(line));
  const fail = (why: string): Error => {
    child.kill('SIGKILL');
    return new Error(`${spec.label} ${why}:\n${output.slice(-20).join('\n')}`);
  };

  const port =
    spec.port ??
    (await new Promise<number>((resolve, reject) => {
      const timer = setTimeout(() => reject(fail(`did not start in ${timeoutMs} ms`)), timeoutMs);
      const onExit = (): void => reject(fail(`exited with ${child.exitCode ?? child.signalCode} before it started`));
      child.once('exit', onExit);
      lines.on('line', (line) => {
        output.push(line);
        const match = /running on port (\d+)/.exec(line);
        if (match?.[1] === undefined) return;
        clearTimeout(timer);
        child.off('exit', onExit);
        resolve(Number(match[1]));
      });
    }));
  const baseUrl = `http://127.0.0.1:${port}`;
  for (;;) {
    if ((await healthStatus(`${baseUrl}/health`)) === 200) break;
    if (child.exitCode !== null || child.signalCode !== null) throw fail('exited before it was healthy');
    if (performance.now() - started > timeoutMs) throw fail(`was not healthy in ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
  const startupMs = performance.now() - started;
  const pid = child.pid ?? 0;

  return {
    label: spec.label,
    pid,
    baseUrl,
    startupMs,
    cpuSeconds: () => cpuSecondsOf(pid),
    rssBytes: () => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024,
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
