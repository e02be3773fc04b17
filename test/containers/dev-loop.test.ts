import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { stacks, type StackName } from '@sample-services/manifest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { compose, docker, dockerBin, probe, repoRoot, waitFor } from './support/docker.js';
import { memberPort } from './support/images.js';
import { leftovers } from './support/stack.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

/** What `docker build` reads (.dockerignore's allow-list), and what the compose files mount or name. */
const copied = [
  'Dockerfile',
  '.dockerignore',
  'package.json',
  'package-lock.json',
  'packages',
  'services',
  'deploy/docker',
  'deploy/compose',
  'deploy/nginx',
];

/** One line of a service's source, changed while `docker compose watch` runs, and what GET / then answers. */
interface Loop {
  stack: StackName;
  /** The compose service that answers, by its name in the stack. */
  as: string;
  file: string;
  /** Picks the one line to change. */
  line: string;
  from: string;
  to: string;
}

const loops: Loop[] = [
  {
    stack: 'simple',
    as: 'web',
    file: 'services/simple/src/app.ts',
    line: "    message: 'Hello from Docker!',",
    from: 'Hello from Docker!',
    to: 'Hello from the development loop!',
  },
  {
    stack: 'database',
    as: 'web',
    file: 'services/database/src/app.ts',
    line: "    message: 'Hello from Flask Docker App!',",
    from: 'Hello from Flask Docker App!',
    to: 'Hello from the development loop!',
  },
  // The users page: an HTML document the frontend builds at start-up, served once the backend is healthy.
  {
    stack: 'two-tier',
    as: 'frontend',
    file: 'services/frontend/src/page/document.ts',
    line: '<title>Users</title>',
    from: '<title>Users</title>',
    to: '<title>Users, in development</title>',
  },
];

/** A sync reaches the running service in seconds; a rebuild of the image and a new container take 20 s or more. */
const changeWithinMs = 15_000;

/**
 * The files of the working tree (git's view: tracked and untracked, without what .gitignore leaves
 * out, such as node_modules and dist), copied to a scratch directory that the test may edit.
 */
async function copyRepository(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), `sample-dev-loop-${stage.runId}-`));
  const git = ['-C', repoRoot, 'ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', ...copied];
  const { stdout } = await promisify(execFile)('git', git, { maxBuffer: 16 * 1024 * 1024 });
  for (const file of stdout.split('\0').filter(Boolean)) {
    await mkdir(dirname(join(dir, file)), { recursive: true });
    // A file deleted from the working tree but still in the index is left out, as docker build leaves it out.
    await copyFile(join(repoRoot, file), join(dir, file)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'ENOENT') throw error;
    });
  }
  return dir;
}

const lastLines = (text: string): string => text.trim().split('\n').slice(-30).join('\n');

interface Watch {
  /** Everything watch printed so far (its build, its container events, its syncs). */
  output: () => string;
  /** Rejects if watch exits before stop(): raced against every wait, so that a failed start fails at once. */
  failed: Promise<never>;
  /** SIGTERM to watch and the client that started it; resolves once they have exited. */
  stop: () => Promise<void>;
}

/** `docker compose <args> watch` as a child process, in a process group of its own (the client runs the compose plugin). */
function startWatch(args: string[]): Watch {
  const child: ChildProcess = spawn(dockerBin, ['compose', ...args, 'watch'], {
    env: { ...process.env, DOCKER_BUILDKIT: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  const append = (chunk: Buffer): void => {
    output += chunk.toString();
  };
  child.stdout?.on('data', append);
  child.stderr?.on('data', append);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stopping = false;
  const failed = new Promise<never>((_, reject) => {
    child.once('exit', (code, signal) => {
      if (!stopping) reject(new Error(`docker compose watch exited (${code ?? signal}):\n${lastLines(output)}`));
    });
  });
  failed.catch(() => undefined); // observed where it is raced; no unhandled rejection after the last race
  return {
    output: () => output,
    failed,
    stop: async () => {
      stopping = true;
      if (child.exitCode !== null || child.signalCode !== null || child.pid === undefined) return;
      process.kill(-child.pid, 'SIGTERM');
      await Promise.race([exited, new Promise((r) => setTimeout(r, 15_000).unref())]);
      if (child.exitCode === null && child.signalCode === null) process.kill(-child.pid, 'SIGKILL');
      await exited;
    },
  };
}

interface ComposeService {
  image?: string;
  read_only?: boolean;
  build?: { target?: string };
  develop?: { watch: { action: string; path: string }[] };
}

describe.skipIf(stage.skipReason !== undefined)('the development loop (deploy/compose/dev.yml, docker compose watch)', () => {
  let scratch = '';
  beforeAll(async () => {
    scratch = await copyRepository();
  });
  afterAll(async () => {
    if (scratch !== '') await rm(scratch, { recursive: true, force: true });
  });

  describe.each(loops)('$stack: $as from $file', ({ stack, as, file, line, from, to }) => {
    const project = `sample-dev-${stack}-${stage.runId}`;
    const members: readonly { as: string; composeImage?: string }[] = stacks[stack].members;
    /** The stack's own services (ours, not nginx): the ones dev.yml builds from the development target. */
    const ours = members.filter((m) => m.composeImage === undefined).map((m) => m.as);
    const fileArgs = (root: string, development: boolean): string[] => [
      '-f',
      join(root, 'deploy/compose', `compose.${stack}.yml`),
      ...(development ? ['-f', join(root, 'deploy/compose/dev.yml'), '--profile', stack] : []),
    ];
    const args = (): string[] => ['--env-file', join(scratch, `${stack}.env`), '-p', project, ...fileArgs(scratch, true)];
    let watch: Watch | undefined;
    let url = '';
    let container = '';
    /** Waits for `check`, failing at once if watch exits meanwhile; a failure shows the service's and watch's last lines. */
    const until = async (what: string, check: () => Promise<boolean>, timeoutMs: number, intervalMs = 100): Promise<void> => {
      const waiting = waitFor(what, async () => ((await check()) ? true : undefined), timeoutMs, intervalMs);
      waiting.catch(() => undefined); // when watch.failed wins the race, the poll still ends (at its deadline) unobserved
      try {
        await (watch === undefined ? waiting : Promise.race([waiting, watch.failed]));
      } catch (error) {
        const logs = await compose([...args(), 'logs', '--no-color', '--tail', '40', as]).catch((e: Error) => e.message);
        throw new Error(
          `${(error as Error).message}\nlast log lines of ${as}:\n${logs}\nlast lines of watch:\n${lastLines(watch?.output() ?? '')}`,
        );
      }
    };
    const answers = async (text: string): Promise<boolean> => {
      const res = await probe(`${url}/`);
      return res.ok && (await res.text()).includes(text);
    };

    beforeAll(async () => {
      // Every host port on a free loopback port; the database password is the local-run file's (dev-db-password).
      const ports = [...members.map((m) => m.as), ...stacks[stack].composeOnly].map((s) => `${s.toUpperCase()}_PORT=127.0.0.1:0`);
      await writeFile(join(scratch, `${stack}.env`), [...ports, ''].join('\n'));
    });
    afterAll(async () => {
      await watch?.stop();
      await compose([...args(), 'down', '-v', '--rmi', 'local', '--remove-orphans'], { timeoutMs: 120_000 }).catch(() => undefined);
    });

    it('config: dev.yml builds our services from the development target, writable, under the project image name; the stack file alone stays production', async () => {
      const config = async (development: boolean): Promise<Record<string, ComposeService>> =>
        (
          JSON.parse(await compose([...fileArgs(repoRoot, development), 'config', '--format', 'json'])) as {
            services: Record<string, ComposeService>;
          }
        ).services;
      const [development, production] = await Promise.all([config(true), config(false)]);
      for (const service of ours) {
        expect(development[service]?.build?.target).toBe('development');
        expect(development[service]?.image).toBeUndefined();
        expect(development[service]?.read_only ?? false).toBe(false);
        expect(development[service]?.develop?.watch.map((rule) => rule.action)).toEqual(['sync', 'sync', 'rebuild', 'rebuild']);
        expect(production[service]?.build?.target).toBeUndefined();
        expect(production[service]?.image).toMatch(/^sample-/);
        expect(production[service]?.read_only).toBe(true);
        expect(production[service]?.develop).toBeUndefined();
      }
    });

    it('watch builds the development images, starts the stack and serves the original line', async () => {
      const started = performance.now();
      watch = startWatch(args());
      await until('watch to start the stack', async () => watch?.output().includes('Watch enabled') ?? false, 600_000, 500);
      const mapping = await compose([...args(), 'port', as, String(memberPort(stack, as))]);
      expect(mapping).toMatch(/^127\.0\.0\.1:\d+$/);
      url = `http://${mapping}`;
      await until(`${as} to answer ${from}`, () => answers(from), 120_000, 250);
      container = await compose([...args(), 'ps', '-q', as]);
      console.log(`${stack}: watch built and started, ${as} answering, in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }, 900_000);

    it(`a changed line of ${file} answers within seconds, in the same container; changed back, the original again`, async () => {
      const original = await readFile(join(scratch, file), 'utf8');
      const lines = original.split('\n');
      const at = lines.flatMap((text, index) => (text.includes(line) ? [index] : []));
      expect(at).toHaveLength(1);
      const changed = lines.map((text, index) => (index === at[0] ? text.replace(from, to) : text)).join('\n');
      const timed = async (content: string, expected: string): Promise<number> => {
        const started = performance.now();
        await writeFile(join(scratch, file), content);
        await until(`${as} to answer ${expected}`, () => answers(expected), 60_000);
        return performance.now() - started;
      };
      const forth = await timed(changed, to);
      const back = await timed(original, from);
      console.log(
        `${stack}: ${as} answered the changed line ${(forth / 1000).toFixed(1)} s after the write, the original again after ${(back / 1000).toFixed(1)} s`,
      );
      expect(forth).toBeLessThan(changeWithinMs);
      expect(back).toBeLessThan(changeWithinMs);
      // Synced into the running container, not a rebuilt image in a new one.
      expect(await compose([...args(), 'ps', '-q', as])).toBe(container);
    }, 180_000);

    it('stopping watch and down -v --rmi local leave no container, network, volume or development image', async () => {
      await watch?.stop();
      await compose([...args(), 'down', '-v', '--rmi', 'local'], { timeoutMs: 120_000 });
      expect(await leftovers(project)).toEqual([]);
      expect(await docker(['image', 'ls', '--quiet', '--filter', `reference=${project}-*`])).toBe('');
    });
  });
});
