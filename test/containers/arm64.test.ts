import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commonContract } from '@sample-services/testing/contract/common';
import { databaseContract } from '@sample-services/testing/contract/database';
import { prepareArm64, arm64Build, type Arm64Engine } from './support/arm64.js';
import { docker, waitForHttp, waitHealthy } from './support/docker.js';
import { imageOf } from './support/images.js';
import { openStack, type Stack } from './support/stack.js';

/**
 * The database image for linux/arm64 (Apple Silicon, Graviton), built on this amd64 machine and run
 * under emulation (npm run test:arm64, docs/troubleshooting.md, "Apple Silicon"): on SQLite alone,
 * and in the database stack on PostgreSQL, answering the contract both ways.
 */
const engine: Arm64Engine = await prepareArm64();
if (engine.skipReason !== undefined) console.warn(engine.skipReason);
const runId = randomBytes(3).toString('hex');
const tag = `arm64-${runId}`;
const image = imageOf('database', tag);
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

describe.skipIf(engine.skipReason !== undefined)('arm64: the database image, emulated', () => {
  beforeAll(async () => {
    const started = performance.now();
    await arm64Build('database', image);
    console.log(`arm64 ${image}: built in ${seconds(performance.now() - started)}`);
  }, 1_200_000);
  afterAll(async () => {
    await docker(['image', 'rm', '--force', image]).catch(() => undefined);
    await engine.release();
  });

  it('is an arm64 image whose node runs as arm64, with the arm64 SQLite addon only', async () => {
    expect(await docker(['image', 'inspect', '--format', '{{.Os}}/{{.Architecture}}', image])).toBe('linux/arm64');
    const probe = 'console.log(process.arch, require("fs").readdirSync("/app/node_modules/better-sqlite3/prebuilds").join(","))';
    expect(await docker(['run', '--rm', '--platform', 'linux/arm64', image, 'node', '-e', probe])).toBe('arm64 linux-arm64.node');
  });

  describe('on SQLite (no DATABASE_URL)', () => {
    const container = `sample-arm64-sqlite-${runId}`;
    let url = '';
    beforeAll(async () => {
      await docker(['run', '-d', '--name', container, '--platform', 'linux/arm64', '-p', '127.0.0.1:0:5000', image]);
      const started = performance.now();
      await waitHealthy(container, 120_000);
      console.log(`arm64 database on SQLite: healthy ${seconds(performance.now() - started)} after run`);
      url = `http://${(await docker(['port', container, '5000'])).split('\n')[0] ?? ''}`;
      await waitForHttp(url);
    }, 180_000);
    afterAll(async () => {
      await docker(['rm', '--force', container]).catch(() => undefined);
    });
    databaseContract(() => url);
    commonContract(() => url);
  });

  describe('in the database stack, on PostgreSQL', () => {
    let stack: Stack;
    let url = '';
    beforeAll(async () => {
      stack = await openStack('database', { tag, runId });
      // The stack's own image tag is this arm64 build: compose runs it as it is, never building.
      await stack.run(['up', '-d', '--wait', '--no-build'], 300_000);
      url = await stack.url('web');
      await waitForHttp(url);
    }, 360_000);
    afterAll(async () => {
      await stack.remove();
    });
    it('runs the arm64 image', async () => {
      const web = await stack.container('web');
      expect(await docker(['inspect', '--format', '{{.Platform}} {{.Config.Image}}', web])).toBe(`linux ${image}`);
      expect(await docker(['exec', web, 'node', '-p', 'process.arch'])).toBe('arm64');
    });
    databaseContract(() => url);
    commonContract(() => url);
  });
});
