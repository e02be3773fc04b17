import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { compose, dockerResult, repoRoot, type CliOptions } from './docker.js';

/** The shared CI tools: docker-engine.sh and offline-images/build.sh (see docs/operations.md, "The container test stage"). */
const toolsDir = resolve(process.env.SHARED_TOOLS_DIR ?? resolve(repoRoot, '../shared/tools'));
const engineScript = resolve(toolsDir, 'docker-engine.sh');
/** Starts Engine 26 with Compose v2 through engineScript (Debian 13's packages). */
const startScript = resolve(repoRoot, 'test/containers/support/start-engine.sh');
/** start_interval in the Dockerfile and compose files came with Engine 25. */
const minimumEngine = 25;
/** offline-images/build.sh: stand-ins for the official base images, under their tags. */
const baseImagesScript = resolve(toolsDir, 'offline-images/build.sh');
/** offline-images/build-sid.sh: the same for current releases, from Debian sid's packages (nginx 1.30, postgres 18, docker:28.5-dind). */
const sidImagesScript = resolve(toolsDir, 'offline-images/build-sid.sh');

/** Base images the Dockerfile and compose files name; there is no registry to pull them from. */
export const baseImages = ['node:24-bookworm-slim', 'postgres:15', 'nginx:1.30'];
/** The upgrade drill's target (compose.postgres-18.yml): the stage needs it, a stack's own run (Podman's) does not. */
const upgradeImages = ['postgres:18'];
/** The images build-sid.sh makes, by its --only name; build.sh makes the others. */
const sidImages: Record<string, 'nginx' | 'postgres'> = { 'nginx:1.30': 'nginx', 'postgres:18': 'postgres' };

async function dockerSucceeds(args: string[]): Promise<boolean> {
  return (await dockerResult(args)).code === 0;
}

/** Runs a tool with its output on our terminal (they report progress and failures themselves). */
function runTool(file: string, args: string[], env: NodeJS.ProcessEnv = {}): Promise<void> {
  return new Promise((done, fail) => {
    const child = spawn(file, args, { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, ...env } });
    child.on('error', fail);
    child.on('exit', (code) => (code === 0 ? done() : fail(new Error(`${file} ${args.join(' ')} exited with ${code}`))));
  });
}

/**
 * Builds stand-ins with baseImagesScript (`args`: which, for which platform), from the Node that runs
 * this process; `missing` says what for, in the error when the script is absent.
 */
export async function buildBaseImages(missing: string, args: string[]): Promise<void> {
  if (!existsSync(baseImagesScript)) throw new Error(`${missing} and ${baseImagesScript} does not exist`);
  // The node stand-ins copy the Node that runs this process (arm64: its version), so it must be the images' line.
  if (!process.version.startsWith('v24.')) {
    throw new Error(`node:24 stand-ins are built from the running Node, which is ${process.version}: run install-node.sh 24 --link`);
  }
  await runTool(baseImagesScript, args, { OFFIMG_NODE_PREFIX: dirname(dirname(process.execPath)) });
}

/** Builds `image` with sidImagesScript (`--only <which>`) when the engine lacks it. */
export async function ensureSidImage(image: string, which: 'docker' | 'nginx' | 'postgres'): Promise<void> {
  if (await dockerSucceeds(['image', 'inspect', image])) return;
  if (!existsSync(sidImagesScript)) throw new Error(`${image} is missing and ${sidImagesScript} does not exist`);
  await runTool(sidImagesScript, ['--only', which]);
  // Its tags follow what sid has on the day: a newer release builds, but not under this name.
  if (!(await dockerSucceeds(['image', 'inspect', image]))) throw new Error(`${sidImagesScript} --only ${which} made no ${image}`);
}

/**
 * The version of the engine the client reaches (the stage's, or another through `options.env`'s
 * DOCKER_HOST) when it is one the stage supports; throws naming what to do otherwise.
 */
export async function supportedEngine(options?: CliOptions): Promise<string> {
  const version = (await dockerResult(['version', '--format', '{{.Server.Version}}'], options)).output.trim();
  if (!(Number.parseInt(version, 10) >= minimumEngine)) {
    throw new Error(`the running engine is ${version}; the stage needs Engine ${minimumEngine}+ (stop it, then ${startScript})`);
  }
  return version;
}

export interface Engine {
  /** True when this stage started dockerd and must stop it again. */
  startedHere: boolean;
}

/**
 * An engine (25 or later) that answers, with Compose v2 and the base images present: the one already
 * running, or one started with the shared tools. Throws with a message that says what is missing.
 */
export async function prepareEngine(): Promise<Engine> {
  let startedHere = false;
  if (!(await dockerSucceeds(['info']))) {
    if (!existsSync(engineScript)) {
      throw new Error(`no Docker engine answers and ${engineScript} does not exist (set SHARED_TOOLS_DIR)`);
    }
    if (process.getuid?.() !== 0) throw new Error(`no Docker engine answers and starting one with ${engineScript} needs root`);
    await runTool(startScript, [toolsDir]);
    startedHere = true;
  }
  const engine = { startedHere };
  try {
    await supportedEngine();
    const composeVersion = await compose(['version', '--short']).catch(() => {
      throw new Error('the Compose v2 plugin (docker compose) is not installed');
    });
    if (!composeVersion.startsWith('2.')) throw new Error(`docker compose is ${composeVersion}, not Compose v2`);
    const wanted = [...baseImages, ...upgradeImages];
    const present = await Promise.all(wanted.map((image) => dockerSucceeds(['image', 'inspect', image])));
    const missing = wanted.filter((_, i) => !present[i]);
    const fromBookworm = missing.filter((image) => sidImages[image] === undefined);
    if (fromBookworm.length > 0) await buildBaseImages(`base images missing (${fromBookworm.join(', ')})`, ['--only', 'node,postgres']);
    for (const image of missing) {
      const which = sidImages[image];
      if (which !== undefined) await ensureSidImage(image, which);
    }
    return engine;
  } catch (error) {
    await releaseEngine(engine);
    throw error;
  }
}

/** Stops dockerd by the PID its start recorded, only when this stage started it. */
export async function releaseEngine(engine: Engine): Promise<void> {
  if (engine.startedHere) await runTool(engineScript, ['stop']);
}
