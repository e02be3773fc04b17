import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { startedLine, type ServiceName } from '@sample-services/manifest';
import { serviceCommand, serviceEntry, startListeningProcess, type ListeningProcess } from '@sample-services/processes/listening-process';
import { repoRoot } from './repo-root.js';

export { serviceCommand, serviceEntry };

export interface ServiceProcess extends ListeningProcess {
  name: ServiceName;
}

/** What every service process gets before the test's own variables: production on 127.0.0.1, as its image runs it. */
const baseEnv = (name: ServiceName): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH,
  HOST: '127.0.0.1',
  NODE_ENV: 'production',
  ...serviceCommand(name).env,
});

/**
 * Starts the compiled service as a real process on an ephemeral port (PORT=0) and learns the
 * port from its JSON start-up line, checked against the manifest's start-up line. A service
 * in development logs readable lines instead: give it a `port` (e.g. from freePort()) to wait on.
 */
export async function startService(
  name: ServiceName,
  env: NodeJS.ProcessEnv = {},
  options: { port?: number } = {},
): Promise<ServiceProcess> {
  const started = await startListeningProcess({
    label: name,
    command: process.execPath,
    args: serviceCommand(name).args,
    env: { ...baseEnv(name), PORT: String(options.port ?? 0), ...env },
    startedMessage: (port) => startedLine(name, port),
    port: options.port,
  });
  return { name, ...started };
}

/**
 * Starts a service built in a folder of its own, e.g. one copied out of the repository: `node dist/main.js`
 * there, as its `npm start` runs it, without the tracing preload, which such a copy does not carry.
 */
export async function startServiceIn(folder: string, name: ServiceName, env: NodeJS.ProcessEnv = {}): Promise<ServiceProcess> {
  const started = await startListeningProcess({
    label: `${name} in ${folder}`,
    command: process.execPath,
    args: ['dist/main.js'],
    cwd: folder,
    env: { ...baseEnv(name), PORT: '0', ...env },
    startedMessage: (port) => startedLine(name, port),
  });
  return { name, ...started };
}

/** Runs a service to its exit (for start-up failures) and returns its code and output. */
export async function runServiceToExit(name: ServiceName, env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, serviceCommand(name).args, {
    cwd: repoRoot,
    env: { ...baseEnv(name), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // 'close', not 'exit': by then all of the output is read.
  const [code] = (await once(child, 'close')) as [number | null];
  return { code, output };
}
