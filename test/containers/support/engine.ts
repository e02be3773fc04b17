import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { compose, dockerResult, repoRoot } from './docker.js';

/** The shared CI tools: docker-engine.sh and offline-images/build.sh (see docs/operations.md, "The container test stage"). */
const toolsDir = resolve(process.env.SHARED_TOOLS_DIR ?? resolve(repoRoot, '../shared/tools'));
const engineScript = resolve(toolsDir, 'docker-engine.sh');
/** Starts Engine 26 with Compose v2 through engineScript (Debian 13's packages). */
const startScript = resolve(repoRoot, 'test/containers/support/start-engine.sh');
/** start_interval in the Dockerfile and compose files came with Engine 25. */
const minimumEngine = 25;
/** offline-images/build.sh: stand-ins for the official base images, under their tags. */
const baseImagesScript = resolve(toolsDir, 'offline-images/build.sh');
/** offline-images/build-sid.sh: the same for current releases, from Debian sid's packages (nginx 1.30). */
const sidImagesScript = resolve(toolsDir, 'offline-images/build-sid.sh');

/** Base images the Dockerfile and compose files name; there is no registry to pull them from. */
export const baseImages = ['node:24-bookworm-slim', 'postgres:15', 'nginx:1.30'];

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
    const version = (await dockerResult(['version', '--format', '{{.Server.Version}}'])).output.trim();
    if (!(Number.parseInt(version, 10) >= minimumEngine)) {
      throw new Error(`the running engine is ${version}; the stage needs Engine ${minimumEngine}+ (stop it, then ${startScript})`);
    }
    const composeVersion = await compose(['version', '--short']).catch(() => {
      throw new Error('the Compose v2 plugin (docker compose) is not installed');
    });
    if (!composeVersion.startsWith('2.')) throw new Error(`docker compose is ${composeVersion}, not Compose v2`);
    const present = await Promise.all(baseImages.map((image) => dockerSucceeds(['image', 'inspect', image])));
    const missing = baseImages.filter((_, i) => !present[i]);
    const fromBookworm = missing.filter((image) => !image.startsWith('nginx:'));
    if (fromBookworm.length > 0) await buildBaseImages(`base images missing (${fromBookworm.join(', ')})`, ['--only', 'node,postgres']);
    if (missing.some((image) => image.startsWith('nginx:'))) {
      if (!existsSync(sidImagesScript)) throw new Error(`nginx:1.30 is missing and ${sidImagesScript} does not exist`);
      await runTool(sidImagesScript, ['--only', 'nginx']);
    }
    return engine;
  } catch (error) {
    await releaseEngine(engine);
    throw error;
  }
}

/** A stand-in that sidImagesScript makes (`only`: docker, nginx or postgres), built when the engine lacks it. */
export async function ensureSidImage(image: string, only: string): Promise<void> {
  if (await dockerSucceeds(['image', 'inspect', image])) return;
  if (!existsSync(sidImagesScript)) throw new Error(`${image} is missing and ${sidImagesScript} does not exist`);
  if (process.getuid?.() !== 0) throw new Error(`${image} is missing and building it with ${sidImagesScript} needs root`);
  await runTool(sidImagesScript, ['--only', only]);
}

/** Stops dockerd by the PID its start recorded, only when this stage started it. */
export async function releaseEngine(engine: Engine): Promise<void> {
  if (engine.startedHere) await runTool(engineScript, ['stop']);
}
