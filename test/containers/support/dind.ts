import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { docker, dockerBin, dockerOutput, dockerResult, repoRoot, waitFor, type CliOptions } from './docker.js';
import { ensureSidImage } from './engine.js';
import type { ContainerStage } from './images.js';
import type { StackEngine } from './stack.js';

/** The official Docker-in-Docker tag; offline, build-sid.sh's stand-in from Debian sid (Engine 28.5, Compose 2.40). */
export const dindImage = 'docker:28.5-dind';

/**
 * Engine 29's minimum API version. The engine in the container is started with it
 * (DOCKER_MIN_API_VERSION), so a client of the project's that spoke an older API is refused here as there.
 */
export const engine29MinimumApi = '1.44';

export interface Dind {
  name: string;
  /** `docker <args>` by the engine's own CLI and plugins, inside its container. */
  inside: (args: string[], timeoutMs?: number) => Promise<string>;
  /** `docker <args>` by the stage's client (dockerBin) through the engine's socket; `options.env` adds to it. */
  fromHost: (args: string[], options?: CliOptions) => Promise<string>;
  /** DOCKER_HOST of the engine's socket, on this host. */
  socket: string;
  /** openStack's engine for stacks on it: its own Compose, ports published on its container's address. */
  stackEngine: StackEngine;
  /** `docker save` on the stage's engine, piped into `docker load` on this one (through its socket). */
  load: (images: string[]) => Promise<void>;
  /** Removes the container with its /var/lib/docker volume, and the host folders; safe to call twice. */
  remove: () => Promise<void>;
}

/**
 * Runs `docker <from>` into `docker <to>` on the engine at `toHost`, through a pipe between the two
 * (as a shell's `|`: the stream never passes through this process); rejects with either's stderr tail.
 */
function pipeDocker(from: string[], to: string[], toHost: string, timeoutMs: number): Promise<void> {
  const finished = (child: ChildProcess, args: string[]): Promise<void> => {
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr = `${stderr}${chunk.toString()}`.slice(-4_000)));
    return new Promise((resolve, reject) => {
      child.on('error', reject);
      child.on('exit', (code, signal) =>
        code === 0 ? resolve() : reject(new Error(`docker ${args.join(' ')} failed (${code ?? signal}):\n${stderr.trim()}`)),
      );
    });
  };
  const source = spawn(dockerBin, from, { stdio: ['ignore', 'pipe', 'pipe'] });
  const sink = spawn(dockerBin, to, { stdio: [source.stdout, 'ignore', 'pipe'], env: { ...process.env, DOCKER_HOST: toHost } });
  // The sink holds its own copy of the pipe's end; this process must not read from it.
  source.stdout.destroy();
  const timer = setTimeout(() => [source, sink].forEach((child) => child.kill()), timeoutMs);
  return Promise.all([finished(source, from), finished(sink, to)]).then(
    () => clearTimeout(timer),
    (error: unknown) => {
      clearTimeout(timer);
      [source, sink].forEach((child) => child.kill());
      throw error;
    },
  );
}

/**
 * Docker Engine 28.5 in a privileged container of this run, with its own volume for /var/lib/docker,
 * its socket in a host folder, the repository's deploy/ read-only at its own path (the compose files
 * and what they mount), and a shared folder for the stacks' env and secret files. Built with
 * build-sid.sh when the tag is missing. Removed again if it does not come up. `containerdStore`: images
 * in containerd's store (Engine 29's default), where BuildKit takes attestations, which the classic store refuses.
 */
export async function openDind(stage: ContainerStage, { purpose = 'stacks', containerdStore = false } = {}): Promise<Dind> {
  await ensureSidImage(dindImage, 'docker');
  const name = `engine28-${purpose}-${stage.runId}`;
  const label = `sample-services.test-run=${stage.runId}`;
  const dir = await mkdtemp(join(tmpdir(), `${name}-`));
  const runDir = join(dir, 'run');
  const filesDir = join(dir, 'files');
  await Promise.all([mkdir(runDir), mkdir(filesDir)]);
  const daemonJson = join(dir, 'daemon.json');
  await writeFile(daemonJson, JSON.stringify(containerdStore ? { features: { 'containerd-snapshotter': true } } : {}));
  const deploy = join(repoRoot, 'deploy');
  const remove = async (): Promise<void> => {
    await docker(['rm', '--force', '--volumes', name]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  };
  try {
    await docker([
      'run',
      '--detach',
      '--privileged',
      '--name',
      name,
      '--label',
      label,
      '--env',
      `DOCKER_MIN_API_VERSION=${engine29MinimumApi}`,
      // Anonymous, so that `rm --volumes` takes it; labelled, so that a crashed run's is found.
      '--mount',
      `type=volume,dst=/var/lib/docker,volume-label=${label}`,
      '--volume',
      `${runDir}:/var/run`,
      '--volume',
      `${filesDir}:${filesDir}`,
      '--volume',
      `${deploy}:${deploy}:ro`,
      '--volume',
      `${daemonJson}:/etc/docker/daemon.json:ro`,
      dindImage,
    ]);
    await waitFor(
      `the engine in ${name}`,
      async () => ((await dockerResult(['exec', name, 'docker', 'info'])).code === 0 ? true : undefined),
      60_000,
    );
  } catch (error) {
    const logs = await dockerResult(['logs', '--tail', '20', name]);
    await remove();
    throw new Error(`${(error as Error).message}\nlast log lines of ${name}:\n${logs.output}`);
  }
  const address = await docker(['inspect', '--format', '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}', name]);
  const socket = `unix://${runDir}/docker.sock`;
  return {
    name,
    socket,
    inside: (args, timeoutMs) => docker(['exec', name, 'docker', ...args], { timeoutMs }),
    fromHost: (args, options = {}) => docker(args, { ...options, env: { DOCKER_HOST: socket, ...options.env } }),
    stackEngine: {
      compose: (args, options) => dockerOutput(['exec', name, 'docker', 'compose', ...args], { timeoutMs: options?.timeoutMs }),
      filesDir,
      // Published on the container's own addresses: the host reaches them at the container's.
      publishOn: '0.0.0.0',
      reachAt: address,
    },
    // Through the socket rather than `docker exec -i … docker load`: the stage's engine then does not relay the stream.
    load: (images) => pipeDocker(['save', ...images], ['load', '--quiet'], socket, 300_000),
    remove,
  };
}
