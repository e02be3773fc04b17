import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

export type ServiceName = 'simple' | 'proxy' | 'database' | 'backend' | 'frontend';

export const repoRoot = fileURLToPath(new URL('../../..', import.meta.url));

export interface ServiceProcess {
  name: ServiceName;
  port: number;
  baseUrl: string;
  /** Every line the process wrote so far, stdout and stderr. */
  lines: string[];
  /** Resolves with the exit code (null when killed by a signal) once the process ends. */
  exited: Promise<number | null>;
  /** Sends the signal (default SIGTERM) and waits for the exit code. */
  stop: (signal?: NodeJS.Signals) => Promise<number | null>;
}

/**
 * Starts the compiled service as a real production process on an ephemeral port
 * (PORT=0) and learns the port from its start-up line, so tests never race for ports.
 */
export async function startService(name: ServiceName, env: Record<string, string> = {}): Promise<ServiceProcess> {
  const child = spawn(process.execPath, [`services/${name}/dist/main.js`], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  createInterface({ input: child.stderr }).on('line', (line) => lines.push(line));
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start in 15 s:\n${lines.join('\n')}`)), 15_000);
    createInterface({ input: child.stdout }).on('line', (line) => {
      lines.push(line);
      const match = /running on port (\d+)/.exec(line);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(Number(match[1]));
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`${name} exited with ${code} before it started:\n${lines.join('\n')}`));
    });
  });
  return {
    name,
    port,
    baseUrl: `http://127.0.0.1:${port}`,
    lines,
    exited,
    stop: async (signal = 'SIGTERM') => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      return exited;
    },
  };
}

/** Runs a service to its exit (for start-up failures) and returns its code and output. */
export async function runServiceToExit(name: ServiceName, env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [`services/${name}/dist/main.js`], {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const [code] = (await once(child, 'exit')) as [number | null];
  return { code, output };
}
