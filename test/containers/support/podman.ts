import { execFile, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { stacks, type StackMember, type StackName } from '@sample-services/manifest';
import { dockerBin, repoRoot } from './docker.js';
import { baseImages } from './engine.js';
import { imageOf, memberPort } from './images.js';

/** podman.sh of the shared tools: Debian 12's Podman serving the Docker API (docs/troubleshooting.md, "Podman"). */
const toolsDir = resolve(process.env.SHARED_TOOLS_DIR ?? resolve(repoRoot, '../shared/tools'));
const podmanScript = resolve(toolsDir, 'podman.sh');
export const podmanSocket = `unix://${process.env.PODMAN_ENGINE_DIR ?? '/run/podman-engine'}/podman.sock`;

/**
 * Every client call of the Podman tests: the Podman socket, never the default Docker engine's (no
 * DOCKER_CONTEXT can override it), and the legacy builder, since BuildKit through Compose would
 * pull its builder image.
 */
const podmanEnv = (): NodeJS.ProcessEnv => {
  const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: podmanSocket, DOCKER_BUILDKIT: '0' };
  delete env.DOCKER_CONTEXT;
  return env;
};

/** `docker <args>` against Podman: trimmed stdout; rejects with the output tail on a non-zero exit. */
export function podmanDocker(args: string[], timeoutMs = 120_000): Promise<string> {
  return new Promise((done, fail) => {
    execFile(dockerBin, args, { env: podmanEnv(), timeout: timeoutMs, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error === null) return done(stdout.trim());
      const tail = `${stdout}\n${stderr}`.trim().split('\n').slice(-30).join('\n');
      fail(new Error(`docker ${args.join(' ')} on Podman failed (${error.code ?? error.signal}):\n${tail}`));
    });
  });
}

function runScript(args: string[]): Promise<number> {
  return new Promise((done, fail) => {
    // Without DOCKER_HOST: start copies the base images from the Docker engine when one runs.
    const env: NodeJS.ProcessEnv = { ...process.env, PODMAN_IMAGES: baseImages.join(' ') };
    delete env.DOCKER_HOST;
    const child = spawn(podmanScript, args, { stdio: ['ignore', 'inherit', 'inherit'], env });
    child.on('error', fail);
    child.on('exit', (code) => done(code ?? -1));
  });
}

export interface PodmanEngine {
  /** Set when Podman is not available outside CI: the file skips with this message. */
  skipReason?: string;
  /** True when this file started Podman and stops it again. */
  startedHere: boolean;
}

/**
 * Podman's API on podmanSocket: the one running, or one started with podman.sh (root only). Without
 * it the file skips, except under CI=true, where it fails.
 */
export async function preparePodman(): Promise<PodmanEngine> {
  const unavailable = (reason: string): PodmanEngine => {
    if (process.env.CI === 'true') throw new Error(`Podman tests: ${reason}`);
    return { skipReason: `Podman tests skipped: ${reason}`, startedHere: false };
  };
  const answers = (): Promise<boolean> =>
    podmanDocker(['version', '--format', '{{.Server.APIVersion}}'], 15_000).then(
      () => true,
      () => false,
    );
  if (await answers()) return { startedHere: false };
  if (!existsSync(podmanScript)) return unavailable(`no Podman answers on ${podmanSocket} and ${podmanScript} does not exist`);
  if (process.getuid?.() !== 0) return unavailable(`no Podman answers on ${podmanSocket} and starting it with ${podmanScript} needs root`);
  const code = await runScript(['start']);
  if (code !== 0 || !(await answers())) return unavailable(`${podmanScript} start exited with ${code}`);
  return { startedHere: true };
}

export async function releasePodman(engine: PodmanEngine): Promise<void> {
  if (engine.startedHere) await runScript(['stop']);
}

export interface PodmanStack {
  project: string;
  /** `docker compose -p <project> -f <stack>.yml -f podman.yml --profile <stack> <args>` on Podman: its stdout. */
  run: (args: string[], timeoutMs?: number) => Promise<string>;
  /** http://127.0.0.1:<port> of a service's published port (the member's manifest port unless given). */
  url: (service: string, port?: number) => Promise<string>;
  /** down -v, this run's images and the env file; safe to call twice. */
  remove: () => Promise<void>;
}

/**
 * A stack as a Podman user runs it: the stack's file with deploy/compose/podman.yml and the stack's
 * profile, images tagged for this run, a random password in a secret file, every port on a free
 * loopback port.
 */
export async function openPodmanStack(stack: StackName, runId: string): Promise<PodmanStack> {
  const project = `sample-podman-${stack}-${runId}`;
  const tag = `podman-${runId}`;
  const dir = await mkdtemp(join(tmpdir(), `${project}-`));
  // Readable by the services' user (uid 1000): compose bind-mounts the file as it is.
  const passwordFile = join(dir, 'db-password');
  await writeFile(passwordFile, `${randomBytes(12).toString('hex')}\n`, { mode: 0o644 });
  const ports = [...stacks[stack].members.map((m) => m.as), ...stacks[stack].composeOnly].map(
    (as) => `${as.toUpperCase()}_PORT=127.0.0.1:0`,
  );
  const envFile = join(dir, 'stack.env');
  await writeFile(envFile, [`TAG=${tag}`, 'POSTGRES_USER=tester', `DB_PASSWORD_FILE=${passwordFile}`, ...ports, ''].join('\n'));
  const files = [`compose.${stack}.yml`, 'podman.yml'].flatMap((file) => ['-f', join(repoRoot, 'deploy/compose', file)]);
  const run = (args: string[], timeoutMs = 180_000): Promise<string> =>
    podmanDocker(['compose', '--env-file', envFile, '-p', project, ...files, '--profile', stack, ...args], timeoutMs);
  return {
    project,
    run,
    url: async (service, port = memberPort(stack, service)) => {
      const mapping = await run(['port', service, String(port)]);
      if (!/^127\.0\.0\.1:\d+$/.test(mapping)) throw new Error(`${service}:${port} is published as "${mapping}", not on 127.0.0.1`);
      return `http://${mapping}`;
    },
    remove: async () => {
      await run(['down', '-v', '--remove-orphans']).catch(() => undefined);
      const members: readonly StackMember[] = stacks[stack].members;
      const images = members.filter((m) => m.composeImage === undefined).map((m) => imageOf(m.service, tag));
      if (images.length > 0) await podmanDocker(['image', 'rm', '--force', ...images]).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}
