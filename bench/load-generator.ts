import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './server-process.js';

const run = promisify(execFile);

export type LoadGeneratorName = 'wrk' | 'autocannon';

export interface LoadRequest {
  url: string;
  method: 'GET' | 'POST';
  /** JSON body; every `[<id>]` in it is replaced by a unique id per request. */
  body?: string;
  /** Pause before each request of a connection, for latency at a fixed pace rather than at saturation. */
  pauseMs?: number;
}

export interface LoadSettings {
  tool: LoadGeneratorName;
  connections: number;
  durationSeconds: number;
  /** CPU list for taskset; undefined runs unpinned. */
  cpus: string | undefined;
}

export interface LoadResult {
  requestsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** Socket errors, timeouts and answers other than 2xx. */
  errors: number;
}

/** wrk (C, one thread) costs far less CPU per request than autocannon, so it is preferred when installed. */
export function defaultLoadGenerator(): LoadGeneratorName {
  return ['/usr/bin/wrk', '/usr/local/bin/wrk'].some((path) => existsSync(path)) ? 'wrk' : 'autocannon';
}

function pinned(cpus: string | undefined, command: string, args: string[]): [string, string[]] {
  return cpus === undefined ? [command, args] : ['taskset', ['-c', cpus, command, ...args]];
}

async function runWrk(request: LoadRequest, settings: LoadSettings): Promise<LoadResult> {
  const script = join(repoRoot, 'bench/wrk-report.lua');
  const timing = [`-c${settings.connections}`, `-d${settings.durationSeconds}s`, '--timeout', '5s'];
  const args = ['-t1', ...timing, '-s', script, request.url, '--', request.method, String(request.pauseMs ?? 0)];
  if (request.body !== undefined) args.push(request.body);
  const { stdout } = await run(...pinned(settings.cpus, 'wrk', args));
  const line = stdout.split('\n').find((l) => l.startsWith('{"requests"'));
  if (line === undefined) throw new Error(`wrk printed no summary:\n${stdout}`);
  const r = JSON.parse(line) as Record<'requests' | 'durationUs' | 'non2xx' | 'socketErrors' | 'timeouts' | 'p50Us' | 'p99Us', number>;
  return {
    requestsPerSecond: r.requests / (r.durationUs / 1e6),
    p50Ms: r.p50Us / 1000,
    p99Ms: r.p99Us / 1000,
    errors: r.non2xx + r.socketErrors + r.timeouts,
  };
}

async function runAutocannon(request: LoadRequest, settings: LoadSettings): Promise<LoadResult> {
  const cli = join(repoRoot, 'node_modules/autocannon/autocannon.js');
  const args = [cli, '--json', '-c', String(settings.connections), '-d', String(settings.durationSeconds), '-t', '5', '-m', request.method];
  if (request.body !== undefined) args.push('-H', 'content-type=application/json', '-b', request.body, '--idReplacement');
  if (request.pauseMs !== undefined) args.push('-R', String(Math.round((settings.connections * 1000) / request.pauseMs)));
  args.push(request.url);
  const { stdout } = await run(...pinned(settings.cpus, process.execPath, args), { maxBuffer: 16 * 1024 * 1024 });
  const r = JSON.parse(stdout) as {
    requests: { total: number };
    duration: number;
    latency: { p50: number; p99: number };
    errors: number;
    timeouts: number;
    non2xx: number;
  };
  return {
    requestsPerSecond: r.requests.total / r.duration,
    p50Ms: r.latency.p50,
    p99Ms: r.latency.p99,
    errors: r.errors + r.timeouts + r.non2xx,
  };
}

export function runLoad(request: LoadRequest, settings: LoadSettings): Promise<LoadResult> {
  return settings.tool === 'wrk' ? runWrk(request, settings) : runAutocannon(request, settings);
}
