import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendContract } from '@sample-services/testing/contract/backend';
import { commonContract } from '@sample-services/testing/contract/common';
import { databaseContract } from '@sample-services/testing/contract/database';
import { frontendContract } from '@sample-services/testing/contract/frontend';
import { simpleContract } from '@sample-services/testing/contract/simple';
import type { StackName } from './support/images.js';
import { waitForHttp } from './support/docker.js';
import { openPodmanStack, podmanDocker, preparePodman, releasePodman, type PodmanStack } from './support/podman.js';
import { leftovers } from './support/stack.js';

/**
 * The three stacks as a Podman user runs them (docs/troubleshooting.md, "Podman"): Debian 12's
 * Podman 4.3.1 through its Docker API, Compose v2, the legacy builder, each stack's file with
 * deploy/compose/podman.yml. Everything goes to Podman's socket, never to the Docker engine, and
 * builds its own images there: the stage's images are the Docker engine's.
 */
const engine = await preparePodman();
if (engine.skipReason !== undefined) console.warn(engine.skipReason);
const runId = randomBytes(3).toString('hex');
const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** The part of `docker compose config --format json` that says which service builds which image. */
interface ComposeConfig {
  services: Record<string, { image?: string; build?: unknown }>;
}

/** Build and start a stack on Podman, timed; hands its URLs to `urls` once it is healthy. */
function podmanStack(stack: StackName, services: string[], urls: Record<string, string>): () => PodmanStack {
  let opened: PodmanStack | undefined;
  beforeAll(async () => {
    opened = await openPodmanStack(stack, runId);
  });
  afterAll(async () => {
    await opened?.remove();
  });
  const get = (): PodmanStack => {
    if (opened === undefined) throw new Error(`the ${stack} stack was not opened`);
    return opened;
  };

  it('builds with the legacy builder through Podman (the runtime target), each image once', async () => {
    // Compose's legacy builder builds a shared image (web's and migrate's) once per service: the
    // first service to name an image builds it, and every other one must ask for the same build.
    const config = JSON.parse(await get().run(['config', '--format', 'json'])) as ComposeConfig;
    const builders = new Map<string, string>();
    for (const [name, { image, build }] of Object.entries(config.services)) {
      if (image === undefined || build === undefined) continue;
      const first = builders.get(image);
      if (first === undefined) builders.set(image, name);
      else expect(build, `${name} builds ${image} as ${first} does`).toEqual(config.services[first]?.build);
    }
    const started = performance.now();
    await get().run(['build', ...builders.values()], 900_000);
    console.log(`podman ${stack} stack: build in ${seconds(performance.now() - started)}`);
  }, 900_000);

  it('up -d --wait: every service runs and is healthy', async () => {
    const started = performance.now();
    await get().run(['up', '-d', '--wait'], 180_000);
    console.log(`podman ${stack} stack: up -d --wait in ${seconds(performance.now() - started)}`);
    for (const service of services) {
      urls[service] = await get().url(service);
      await waitForHttp(urls[service] ?? '');
    }
    // Podman's `ps` status has no "(healthy)": the container's own state says it.
    for (const service of services) {
      const container = await get().run(['ps', '-q', service]);
      expect(await podmanDocker(['inspect', '--format', '{{.State.Status}} {{.State.Health.Status}}', container]), service).toBe(
        'running healthy',
      );
    }
  }, 200_000);
  return get;
}

describe.skipIf(engine.skipReason !== undefined)('Podman: the compose stacks with deploy/compose/podman.yml', () => {
  afterAll(async () => {
    await releasePodman(engine);
  });

  it('is Podman serving a Docker API older than Engine 25 (the reason for podman.yml)', async () => {
    const version = await podmanDocker(['version', '--format', '{{.Server.APIVersion}} {{range .Server.Components}}{{.Name}} {{end}}']);
    expect(version).toMatch(/^1\.(\d+) .*Podman Engine/);
    console.log(`podman: Docker API ${version.split(' ')[0]}`);
  });

  describe("simple: web, and nginx in front of it asking the engine's own DNS", () => {
    const urls: Record<string, string> = {};
    const stack = podmanStack('simple', ['web'], urls);
    it('the proxy answers once web is healthy', async () => {
      urls.proxy = await stack().url('proxy');
      await waitForHttp(urls.proxy);
    });
    describe('variant A on its published port', () => {
      simpleContract(() => urls.web ?? '', { environment: 'production' });
      commonContract(() => urls.web ?? '');
    });
    describe('variant A through nginx', () => {
      simpleContract(() => urls.proxy ?? '', { environment: 'production' });
      commonContract(() => urls.proxy ?? '');
    });
    it('down -v removes its containers, network and volume', async () => {
      await stack().run(['down', '-v']);
      expect(await leftovers(stack().project, podmanDocker)).toEqual([]);
    });
  });

  describe('database: variant B on PostgreSQL', () => {
    const urls: Record<string, string> = {};
    const stack = podmanStack('database', ['web'], urls);
    describe('variant B on its published port', () => {
      databaseContract(() => urls.web ?? '');
      commonContract(() => urls.web ?? '');
    });
    it('down -v removes the containers, the networks and both volumes', async () => {
      await stack().run(['down', '-v']);
      expect(await leftovers(stack().project, podmanDocker)).toEqual([]);
    });
  });

  describe('two-tier: frontend, backend, PostgreSQL', () => {
    const urls: Record<string, string> = {};
    const stack = podmanStack('two-tier', ['backend', 'frontend'], urls);
    describe('the backend on its published port', () => {
      backendContract(() => urls.backend ?? '');
      commonContract(() => urls.backend ?? '');
    });
    describe('the frontend, reaching the backend by its service name', () => {
      frontendContract(
        () => urls.frontend ?? '',
        () => urls.backend ?? '',
      );
      commonContract(() => urls.frontend ?? '');
    });
    it('down -v removes the containers, the networks and both volumes', async () => {
      await stack().run(['down', '-v']);
      expect(await leftovers(stack().project, podmanDocker)).toEqual([]);
    });
  });
});
