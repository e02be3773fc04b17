import { services, type ServiceName } from '@sample-services/manifest';
import { docker, dockerResult, repoRoot } from './docker.js';
import { buildBaseImages, prepareEngine, releaseEngine } from './engine.js';

/**
 * The arm64 stand-in of the Dockerfile's runtime base, under the name of Docker Hub's arm64
 * repository (offline-images/build.sh --arch arm64). A Mac builds from the official multi-arch tag.
 */
const arm64Base = 'arm64v8/node:24-bookworm-slim';

export interface Arm64Engine {
  /** Set when the engine, emulation or stand-ins are not available outside CI: the file skips with this message. */
  skipReason?: string;
  /** Stops what this file started. */
  release: () => Promise<void>;
}

/**
 * The container stage's engine (see prepareEngine) that also runs arm64 binaries: the arm64 stand-in
 * built when missing (its script registers qemu's binfmt handler), then checked by running its node.
 * Under CI=true anything missing fails the file; elsewhere it skips with the reason.
 */
export async function prepareArm64(): Promise<Arm64Engine> {
  let engine;
  try {
    engine = await prepareEngine();
    if ((await dockerResult(['image', 'inspect', arm64Base])).code !== 0) {
      if (process.getuid?.() !== 0) throw new Error(`${arm64Base} is missing and building it needs root`);
      await buildBaseImages(`${arm64Base} is missing`, ['--arch', 'arm64', '--only', 'node']);
    }
    const arch = await docker(['run', '--rm', '--platform', 'linux/arm64', arm64Base, 'node', '-p', 'process.arch']);
    if (arch !== 'arm64') throw new Error(`${arm64Base} runs node as ${arch}, not arm64`);
  } catch (error) {
    if (engine !== undefined) await releaseEngine(engine);
    if (process.env.CI === 'true') throw error;
    return { skipReason: `arm64 tests skipped: ${(error as Error).message}`, release: async () => {} };
  }
  return { release: () => releaseEngine(engine) };
}

/**
 * docs/troubleshooting.md's build for another platform: BuildKit, linux/arm64, the stand-in in place of the
 * Dockerfile's runtime-base stage. The stages before it run natively (--platform=$BUILDPLATFORM); only the runtime's are emulated.
 */
export async function arm64Build(service: ServiceName, image: string): Promise<void> {
  await docker(
    [
      'buildx',
      'build',
      '--platform',
      'linux/arm64',
      '--build-context',
      `runtime-base=docker-image://${arm64Base}`,
      '--build-arg',
      `SERVICE=${service}`,
      '--build-arg',
      `PORT=${services[service].port}`,
      '-t',
      image,
      '--load',
      repoRoot,
    ],
    { timeoutMs: 1_200_000 },
  );
}
