import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TestProject } from 'vitest/node';
import { docker, repoRoot } from './support/docker.js';
import { prepareEngine, releaseEngine } from './support/engine.js';
import { imageOf, services, type ContainerStage } from './support/images.js';

const stageStarted = performance.now();
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/**
 * The container stage's frame: an engine (started here when needed), then one
 * `docker build -t sample-<service>:<tag> .` per service, timed; afterwards every image of
 * this run is removed and dockerd is stopped if this stage started it. Without an engine the
 * files skip with the reason, except under CI=true, where the stage fails.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const runId = randomBytes(3).toString('hex');
  const tag = `test-${runId}`;
  let engine;
  try {
    engine = await prepareEngine();
  } catch (error) {
    if (process.env.CI === 'true') throw error;
    const skipReason = `container tests skipped: ${(error as Error).message}`;
    console.warn(`\n${skipReason}\n(under CI=true this fails the stage)\n`);
    project.provide('containerStage', { skipReason, tag, runId } satisfies ContainerStage);
    return async () => {};
  }
  const label = `sample-services.test-run=${runId}`;
  const report: string[] = [];
  const provenance = buildProvenance();
  const build = async ({ service, port }: (typeof services)[number]): Promise<void> => {
    const started = performance.now();
    // docs/getting-started.md's command with the provenance labels, plus a label that finds this run's leftovers for cleanup.
    const image = imageOf(service, tag);
    const buildArgs = Object.entries({ SERVICE: service, PORT: port, ...provenance }).flatMap(([name, value]) => [
      '--build-arg',
      `${name}=${value}`,
    ]);
    await docker(['build', '--pull=false', '--force-rm', '--label', label, '-t', image, ...buildArgs, repoRoot], { timeoutMs: 900_000 });
    const size = Number(await docker(['image', 'inspect', '--format', '{{.Size}}', image]));
    report.push(`${image}: built in ${seconds(performance.now() - started)}, ${(size / 1e6).toFixed(0)} MB`);
  };
  try {
    // Two builds at a time: each one's TypeScript compile keeps a CPU busy.
    const queue = [...services];
    const worker = async (): Promise<void> => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) await build(next);
    };
    await Promise.all([worker(), worker()]);
  } catch (error) {
    await removeImages(tag, label);
    await releaseEngine(engine);
    throw error;
  }
  console.log(`\n${report.join('\n')}\n`);
  project.provide('containerStage', { tag, runId, provenance } satisfies ContainerStage);

  return async () => {
    await removeImages(tag, label);
    // An engine started here holds nothing else: drop the build cache too. Elsewhere it stays,
    // so that the next run builds in seconds.
    if (engine.startedHere) await docker(['image', 'prune', '--force']);
    await releaseEngine(engine);
    console.log(`container stage: ${seconds(performance.now() - stageStarted)} in all`);
  };
}

/** The OCI labels' values the Dockerfile takes as build arguments (docs/operations.md, "Images"). */
function buildProvenance(): Record<string, string> {
  const git = (...args: string[]): string => {
    try {
      return execFileSync('git', ['-C', repoRoot, ...args], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    } catch {
      return 'unknown';
    }
  };
  const { version } = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string };
  return {
    REVISION: git('rev-parse', 'HEAD'),
    VERSION: version,
    CREATED: new Date().toISOString(),
    SOURCE: git('config', '--get', 'remote.origin.url'),
  };
}

/** This run's tagged images, then the untagged stage images its builds left (same label). */
async function removeImages(tag: string, label: string): Promise<void> {
  const tagged = services.map(({ service }) => imageOf(service, tag));
  await docker(['image', 'rm', '--force', ...tagged]).catch(() => undefined);
  const leftovers = (await docker(['image', 'ls', '--quiet', '--filter', `label=${label}`])).split('\n').filter(Boolean);
  if (leftovers.length > 0) await docker(['image', 'rm', '--force', ...new Set(leftovers)]).catch(() => undefined);
}
