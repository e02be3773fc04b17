import { execFile, spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

/**
 * The client installed with the engine (docker.io's, Engine 26; DOCKER_BIN names another), which
 * finds the Compose v2 and buildx plugins. Builds use BuildKit, the engine's default builder,
 * which finds the local base images without a registry.
 */
export const dockerBin = process.env.DOCKER_BIN ?? '/usr/bin/docker';
const baseEnv = { ...process.env, DOCKER_BUILDKIT: '1' };

export interface CliOptions {
  /** Extra environment for this one call (compose reads its variables from here). */
  env?: Record<string, string>;
  timeoutMs?: number;
}

/** Runs a client (no shell): its trimmed stdout and stderr; rejects with the output tail on a non-zero exit. */
function runCli(file: string, args: string[], options: CliOptions = {}): Promise<{ stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    execFile(
      file,
      args,
      { env: { ...baseEnv, ...options.env }, timeout: options.timeoutMs ?? 120_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        if (error) {
          const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-30).join('\n');
          reject(new Error(`${file} ${args.join(' ')} failed (${error.code ?? error.signal}):\n${tail}`));
        } else resolve({ stdout: stdout.trim(), stderr: stderr.trim() });
      },
    );
  });
}

/** Runs `docker <args>` (no shell) and returns its trimmed stdout; rejects with the output tail. */
export async function docker(args: string[], options?: CliOptions): Promise<string> {
  return (await dockerOutput(args, options)).stdout;
}

/** Like docker(), with stderr too. */
export function dockerOutput(args: string[], options?: CliOptions): Promise<{ stdout: string; stderr: string }> {
  return runCli(dockerBin, args, options);
}

/** Like docker(), but resolves the exit code and output instead of rejecting. */
export function dockerResult(args: string[], options: CliOptions = {}): Promise<{ code: number; output: string }> {
  return new Promise((resolve) => {
    execFile(
      dockerBin,
      args,
      { env: { ...baseEnv, ...options.env }, timeout: options.timeoutMs ?? 60_000, maxBuffer: 64 * 1024 * 1024 },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : -1;
        resolve({ code, output: `${stdout}${stderr}` });
      },
    );
  });
}

/** `docker compose <args>` (Compose v2); resolves its trimmed stdout like docker(). */
export async function compose(args: string[], options?: CliOptions): Promise<string> {
  return (await composeOutput(args, options)).stdout;
}

/** `docker compose <args>` with its stderr too, where Compose writes its warnings. */
export function composeOutput(args: string[], options?: CliOptions): Promise<{ stdout: string; stderr: string }> {
  return dockerOutput(['compose', ...args], options);
}

/** docker inspect with a Go template whose result is JSON, e.g. `{{json .State}}`. */
export async function inspectJson<T>(name: string, template: string): Promise<T> {
  return JSON.parse(await docker(['inspect', '--format', template, name])) as T;
}

/** Polls until check() returns a value other than undefined; fails with `what` after the timeout. */
export async function waitFor<T>(what: string, check: () => Promise<T | undefined>, timeoutMs: number, intervalMs = 500): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

interface HealthState {
  Status: string;
  Running: boolean;
  Health?: { Status: string; Log: { Start: string; End: string; ExitCode: number; Output: string }[] };
}

/** Waits for `inspect` to report the health status `healthy`; fails at once on unhealthy or exit. */
export async function waitHealthy(container: string, timeoutMs: number): Promise<HealthState> {
  return waitFor(
    `${container} to become healthy`,
    async () => {
      const state = await inspectJson<HealthState>(container, '{{json .State}}');
      if (!state.Running) throw new Error(`${container} is ${state.Status}`);
      if (state.Health?.Status === 'unhealthy') throw new Error(`${container} is unhealthy: ${JSON.stringify(state.Health.Log.at(-1))}`);
      return state.Health?.Status === 'healthy' ? state : undefined;
    },
    timeoutMs,
    1_000,
  ).catch(async (error: Error) => {
    const logs = await dockerResult(['logs', '--tail', '30', container]);
    throw new Error(`${error.message}\nlast log lines of ${container}:\n${logs.output}`);
  });
}

/** `http://127.0.0.1:<port>` for a container port published on loopback (`-p 127.0.0.1:0:<port>`). */
export async function publishedUrl(container: string, port: number): Promise<string> {
  const mapping = (await docker(['port', container, `${port}/tcp`])).split('\n')[0] ?? '';
  const match = /^127\.0\.0\.1:(\d+)$/.exec(mapping);
  if (!match) throw new Error(`${container}:${port} is not published on 127.0.0.1 (docker port says "${mapping}")`);
  return `http://127.0.0.1:${match[1]}`;
}

/**
 * GET <url><path>, given up after 2 s: a published port accepts connections before the
 * container's network is wired, and such a request can hang without ever failing.
 */
export function probe(url: string): Promise<Response> {
  return fetch(url, { signal: AbortSignal.timeout(2_000) });
}

/** Waits until GET <url>/health answers `status` (200 unless told). */
export async function waitForHttp(baseUrl: string, timeoutMs = 30_000, status = 200): Promise<void> {
  await waitFor(
    `${baseUrl}/health to answer ${status}`,
    async () => ((await probe(`${baseUrl}/health`)).status === status ? true : undefined),
    timeoutMs,
    250,
  );
}

/**
 * Follows `docker logs -f` from now on (`--tail 0`: no earlier lines) until a line matches,
 * then ends the follower; rejects when the follower exits or the timeout passes first.
 */
export function followLogsUntil(container: string, pattern: RegExp, timeoutMs: number): Promise<string> {
  const child = spawn(dockerBin, ['logs', '-f', '--tail', '0', container], { env: baseEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  return new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no log line matching ${pattern} within ${timeoutMs} ms`)), timeoutMs);
    const onLine = (line: string): void => {
      if (!pattern.test(line)) return;
      clearTimeout(timer);
      resolve(line);
    };
    createInterface({ input: child.stdout }).on('line', onLine);
    createInterface({ input: child.stderr }).on('line', onLine);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`docker logs -f exited (${code}) before a line matched ${pattern}`));
    });
  }).finally(() => child.kill());
}

/** How long `docker stop` takes, in milliseconds. */
export async function timedStop(container: string): Promise<number> {
  const started = performance.now();
  await docker(['stop', container]);
  return performance.now() - started;
}
