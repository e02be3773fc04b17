import { stackNames, stacks, type StackName } from '@sample-services/manifest';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { backendContract } from '@sample-services/testing/contract/backend';
import { commonContract } from '@sample-services/testing/contract/common';
import { databaseContract } from '@sample-services/testing/contract/database';
import { frontendContract } from '@sample-services/testing/contract/frontend';
import { simpleContract } from '@sample-services/testing/contract/simple';
import { dindImage, engine29MinimumApi, openDind, type Dind } from './support/dind.js';
import { dockerResult, waitForHttp } from './support/docker.js';
import { supportedEngine } from './support/engine.js';
import { leftovers, openStack, type Stack } from './support/stack.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** "1.45" -> 45: Docker's API versions are all 1.x and compare by the minor number. */
const apiMinor = (version: string): number => Number(version.split('.')[1]);

/**
 * The three compose stacks on a current engine: Docker Engine 28.5 and its own Compose 2.40 in a
 * privileged container (docker:28.5-dind), beside the stage's Engine 26. The stage's images are
 * loaded into it; each stack runs with that Compose, and the contract the Engine-26 stack files check
 * runs against its published ports. The inner engine refuses APIs older than 1.44, as Engine 29 does.
 */
describe.skipIf(stage.skipReason !== undefined)(`the compose stacks on Docker Engine 28.5 with Compose 2.40 (${dindImage})`, () => {
  let started: Dind | undefined;
  const dindOf = (): Dind => {
    if (started === undefined) throw new Error('the engine was not started');
    return started;
  };
  const opened = new Map<StackName, Stack>();
  const urls: Record<StackName, Record<string, string>> = { simple: {}, database: {}, 'two-tier': {} };
  const stackOf = (name: StackName): Stack => {
    const stack = opened.get(name);
    if (stack === undefined) throw new Error(`the ${name} stack was not opened`);
    return stack;
  };

  /** The engine with the three stacks up and answering; every test waits for it (see beforeEach). */
  const setUp = async (): Promise<void> => {
    const since = performance.now();
    const dind = (started = await openDind(stage));
    for (const name of stackNames) opened.set(name, await openStack(name, stage, dind.stackEngine));
    // The images the three files name, as this Compose reads them: this run's service images and the stand-ins.
    const named = await Promise.all([...opened.values()].map((stack) => stack.run(['config', '--images'])));
    const images = [...new Set(named.flatMap((list) => list.split('\n')).filter(Boolean))];
    const loading = performance.now();
    // Two streams, this run's images and the stand-ins: docker load unpacks and hashes a stream on one CPU.
    const ours = images.filter((image) => image.endsWith(`:${stage.tag}`));
    const groups = [ours, images.filter((image) => !ours.includes(image))].filter((group) => group.length > 0);
    await Promise.all(groups.map((group) => dind.load(group)));
    const upping = performance.now();
    // Simple first, alone: two PostgreSQL initdbs beside it on two CPUs made its web miss the 5 s start
    // period, and wait for the 30 s probe. The other two then together: their waits for health overlap.
    await stackOf('simple').upAndWait();
    await Promise.all([stackOf('database').upAndWait(), stackOf('two-tier').upAndWait()]);
    for (const name of stackNames) {
      for (const { as } of stacks[name].members) {
        const url = await stackOf(name).url(as);
        await waitForHttp(url);
        urls[name][as] = url;
      }
    }
    console.log(
      `engine 28: engine up and the files read in ${seconds(loading - since)}, ${images.length} images loaded in ${seconds(upping - loading)}, ` +
        `the three stacks answering ${seconds(performance.now() - upping)} later`,
    );
  };
  let ready: Promise<void>;

  // vitest reports the tests of a failed beforeAll as skipped: each test awaits the setup, so they fail.
  beforeAll(() => {
    ready = setUp();
    ready.catch(() => undefined);
  });
  beforeEach(async () => {
    await ready;
  }, 600_000);
  afterAll(async () => {
    await ready.catch(() => undefined);
    await started?.remove();
  }, 120_000);

  it(`is Engine 28.5 with Compose 2.40 or later, refusing clients older than API ${engine29MinimumApi} as Engine 29 does`, async () => {
    const dind = dindOf();
    const [engine, api, minimum] = (
      await dind.inside(['version', '--format', '{{.Server.Version}} {{.Server.APIVersion}} {{.Server.MinAPIVersion}}'])
    ).split(' ');
    expect(engine).toMatch(/^28\.5\./);
    expect(minimum).toBe(engine29MinimumApi);
    const composeVersion = await dind.inside(['compose', 'version', '--short']);
    // At least 2.40: the official docker:28.5-dind images ship later Compose releases than sid's.
    const [major = 0, minor = 0] = composeVersion.replace(/^v/, '').split('.').map(Number);
    expect(major * 1000 + minor, composeVersion).toBeGreaterThanOrEqual(2040);
    console.log(`engine 28: Engine ${engine}, API ${api} (minimum ${minimum}), Compose ${composeVersion}`);
    const pinned = await dockerResult(['version'], { env: { DOCKER_HOST: dind.socket, DOCKER_API_VERSION: '1.43' } });
    expect(pinned.code).not.toBe(0);
    expect(pinned.output).toContain('client version 1.43 is too old');
  });

  it("takes the stage's own client and engine check, which speak no API older than that", async () => {
    const dind = dindOf();
    expect(await supportedEngine({ env: { DOCKER_HOST: dind.socket } })).toMatch(/^28\.5\./);
    const client = await dind.fromHost(['version', '--format', '{{.Client.APIVersion}}']);
    expect(apiMinor(client)).toBeGreaterThanOrEqual(apiMinor(engine29MinimumApi));
    // The stage's Compose plugin too, as every Engine-26 stack file drives it.
    expect(await dind.fromHost(['compose', 'ls', '--all', '--format', 'json'])).toContain(stackOf('simple').project);
  });

  describe('simple: web, and nginx in front of it', () => {
    const url = (as: string) => (): string => urls.simple[as] ?? '';
    describe('variant A on its published port', () => {
      simpleContract(url('web'), { environment: 'production' });
      commonContract(url('web'));
    });
    describe('variant A through nginx', () => {
      simpleContract(url('proxy'), { environment: 'production' });
      commonContract(url('proxy'));
    });
  });

  describe('database: variant B on PostgreSQL', () => {
    const url = (): string => urls.database.web ?? '';
    describe('variant B on its published port', () => {
      databaseContract(url);
      commonContract(url);
    });
  });

  describe('two-tier: frontend, backend, PostgreSQL', () => {
    const url = (as: string) => (): string => urls['two-tier'][as] ?? '';
    describe('the backend on its published port', () => {
      backendContract(url('backend'));
      commonContract(url('backend'));
    });
    describe('the frontend on its published port, reaching the backend by its service name', () => {
      frontendContract(url('frontend'), url('backend'));
      commonContract(url('frontend'));
    });
  });

  it('down -v removes every container, network and volume of the three stacks', async () => {
    await Promise.all([...opened.values()].map((stack) => stack.run(['down', '-v'])));
    for (const stack of opened.values()) expect(await leftovers(stack.project, dindOf().fromHost), stack.project).toEqual([]);
  });
});
