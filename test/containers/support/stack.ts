import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stacks, type StackName } from '@sample-services/manifest';
import { composeOutput, docker, inspectJson, repoRoot, type CliOptions } from './docker.js';
import { memberPort, type ContainerStage } from './images.js';

export interface Stack {
  project: string;
  /** The database password of this run: a secret file (DB_PASSWORD_FILE), never a variable or in an image. */
  password: string;
  /** `docker compose --env-file <file> -p <project> -f deploy/compose/<stack>.yml <args>`: its stdout. */
  run: (args: string[], timeoutMs?: number) => Promise<string>;
  /** The same, with stderr, where Compose v2 reports its progress (e.g. what a build named). */
  runOutput: (args: string[], timeoutMs?: number) => Promise<{ stdout: string; stderr: string }>;
  /**
   * `up -d --wait`: returns once every service runs and is healthy (Compose v2), failing if one
   * is not. Prints and returns how long it took, in seconds.
   */
  upAndWait: () => Promise<number>;
  /**
   * http://127.0.0.1:<port> of a service's published port (replica `index`, from 1; another address
   * on another StackEngine); the port is the member's manifest port unless given (as for what
   * compose alone adds, e.g. PostgreSQL).
   */
  url: (service: string, port?: number, index?: number) => Promise<string>;
  /** The id of the service's (first) container. */
  container: (service: string) => Promise<string>;
  /** down -v and the env file; safe to call twice. */
  remove: () => Promise<void>;
}

/** Where a stack runs: the stage's engine unless openStack is given another (e.g. support/dind.ts). */
export interface StackEngine {
  /** `docker compose <args>` against that engine: stdout and stderr. */
  compose: (args: string[], options?: CliOptions) => Promise<{ stdout: string; stderr: string }>;
  /** Where the env and secret files go: that Compose must read them at the same path. */
  filesDir: string;
  /** The host address the stack's ports are published on there, and where this process reaches them. */
  publishOn: string;
  reachAt: string;
}

const stageEngine: StackEngine = { compose: composeOutput, filesDir: tmpdir(), publishOn: '127.0.0.1', reachAt: '127.0.0.1' };

/** The compose service names of a stack, as the host port variables name them: `web` -> WEB_PORT. */
const hostPortVariables = (stack: StackName): string[] =>
  [...stacks[stack].members.map((m) => m.as), ...stacks[stack].composeOnly].map((as) => `${as.toUpperCase()}_PORT`);

/** What a stack's test adds to its compose file: override files (in deploy/compose) and variables of the env file. */
export interface StackAdditions {
  overrides?: string[];
  env?: Record<string, string>;
}

/**
 * A compose stack of this run: a unique project name, this run's image tag, a fresh random
 * database password in a secret file, and every host port on a free loopback port (the engine's
 * publishOn address), all through --env-file.
 */
export async function openStack(
  stack: StackName,
  stage: ContainerStage,
  engine: StackEngine = stageEngine,
  additions: StackAdditions = {},
): Promise<Stack> {
  const project = `sample-${stack}-${stage.runId}`;
  // Characters a URL would misread: the services must encode the secret into DATABASE_URL themselves.
  const password = `${randomBytes(12).toString('hex')}@:/%?#`;
  const dir = await mkdtemp(join(engine.filesDir, `${project}-`));
  // Compose bind-mounts the secret as it is: the services' user (uid 1000) must be able to read it.
  const passwordFile = join(dir, 'db-password');
  await writeFile(passwordFile, `${password}\n`, { mode: 0o644 });
  const envFile = join(dir, 'stack.env');
  const ports = hostPortVariables(stack).map((variable) => `${variable}=${engine.publishOn}:0`);
  const added = Object.entries(additions.env ?? {}).map(([name, value]) => `${name}=${value}`);
  await writeFile(
    envFile,
    [`TAG=${stage.tag}`, 'POSTGRES_USER=tester', `DB_PASSWORD_FILE=${passwordFile}`, ...ports, ...added, ''].join('\n'),
  );
  const files = [`compose.${stack}.yml`, ...(additions.overrides ?? [])].flatMap((file) => ['-f', join(repoRoot, 'deploy/compose', file)]);
  const runOutput = (args: string[], timeoutMs = 180_000): Promise<{ stdout: string; stderr: string }> =>
    engine.compose(['--env-file', envFile, '-p', project, ...files, ...args], { timeoutMs });
  const run = async (args: string[], timeoutMs?: number): Promise<string> => (await runOutput(args, timeoutMs)).stdout;
  return {
    project,
    password,
    run,
    runOutput,
    upAndWait: async () => {
      const started = performance.now();
      await run(['up', '-d', '--wait']);
      const seconds = (performance.now() - started) / 1000;
      console.log(`${stack} stack: up -d --wait in ${seconds.toFixed(1)} s`);
      return seconds;
    },
    url: async (service, port = memberPort(stack, service), index = 1) => {
      const mapping = await run(['port', `--index=${index}`, service, String(port)]);
      const [address, published] = mapping.split(':');
      if (address !== engine.publishOn || !/^\d+$/.test(published ?? '')) {
        throw new Error(`${service}:${port} is published as "${mapping}", not on ${engine.publishOn}`);
      }
      return `http://${engine.reachAt}:${published}`;
    },
    container: async (service) => (await run(['ps', '-q', service])).split('\n')[0] ?? '',
    remove: async () => {
      await run(['down', '-v', '--remove-orphans']).catch(() => undefined);
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Names of the project's containers, volumes or networks that still exist on an engine (`run`: its client; Docker's unless given). */
export async function leftovers(project: string, run: (args: string[]) => Promise<string> = docker): Promise<string[]> {
  const filter = `label=com.docker.compose.project=${project}`;
  const lists = await Promise.all([
    run(['ps', '--all', '--filter', filter, '--format', '{{.Names}}']),
    run(['volume', 'ls', '--filter', filter, '--format', '{{.Name}}']),
    run(['network', 'ls', '--filter', filter, '--format', '{{.Name}}']),
  ]);
  return lists.flatMap((l) => l.split('\n')).filter(Boolean);
}

interface Started {
  StartedAt: string;
  Health?: { Log: { End: string; ExitCode: number }[] };
}

/**
 * The start interval's bound: with probes every second during the start period a service passes its
 * first within a few seconds; without (Engine < 25, or start_interval lost) the first probe runs at 30 s.
 */
export const healthyWithinMs = 10_000;

/** When the container started, and when its first passing health probe (still in the log) ended. */
export async function startAndHealthy(container: string): Promise<{ started: number; firstHealthy: number | undefined }> {
  const state = await inspectJson<Started>(container, '{{json .State}}');
  const passed = state.Health?.Log.filter((l) => l.ExitCode === 0).map((l) => Date.parse(l.End));
  return { started: Date.parse(state.StartedAt), firstHealthy: passed?.length ? Math.min(...passed) : undefined };
}
