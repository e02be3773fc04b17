import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { docker, dockerResult, probe, publishedUrl, repoRoot, waitFor, waitForHttp } from './support/docker.js';
import { underLoad, type LoadReport } from './support/load.js';
import { imageOf, memberPort } from './support/images.js';
import { parsePrometheusText, sampleValue } from '@svc/testing/prometheus-text';
import { removeStack, running, taskUrl, tasksOf, useSingleNodeSwarm } from './support/single-node-swarm.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** GET /api/users answered 200 by one task so far, from its own /metrics on its host-published port. */
async function usersServed(url: string): Promise<number> {
  const metrics = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
  return sampleValue(metrics, 'http_requests_total', { method: 'GET', route: '/api/users', status_code: '200' }) ?? 0;
}

/**
 * The two-tier stack (deploy/swarm/compose.two-tier.yml) under load on a single-node swarm: the users page's
 * API, frontend -> backend -> PostgreSQL, while each of our two services is updated to a new image
 * tag, rolled back, and scaled up and down. swarm-stacks.test.ts runs the contract suites on this
 * stack; this file deploys its own, so that what the operations do to it touches nothing else.
 */
describe.skipIf(stage.skipReason !== undefined)('two-tier stack on Docker Swarm under load (deploy/swarm/compose.two-tier.yml)', () => {
  const fileStarted = performance.now();
  const stack = `sw2tier${stage.runId}`;
  const service = { frontend: `${stack}_frontend`, backend: `${stack}_backend` } as const;
  const secret = `sample-db-password-2t-${stage.runId}`;
  const proxy = `zd-sw2t-ts-proxy-${stage.runId}`;
  const nextImage = { frontend: `${imageOf('frontend', stage.tag)}-next`, backend: `${imageOf('backend', stage.tag)}-next` };
  let leaveSwarm: (() => Promise<void>) | undefined;
  let dir = '';
  let users = '';

  const imageOfService = (name: string): Promise<string> =>
    docker(['service', 'inspect', name, '--format', '{{.Spec.TaskTemplate.ContainerSpec.Image}}']);
  /** Loads GET /api/users through the proxy during `operation`; every non-2xx, connection error and timeout is a failure. */
  const noFailedRequest = async (label: string, operation: () => Promise<void>): Promise<LoadReport> => {
    const { 'ts-proxy': report } = await underLoad({ 'ts-proxy': users }, `swarm two-tier: ${label}`, operation);
    expect(report.failures, label).toEqual({});
    expect(report.ok, label).toBeGreaterThan(0);
    return report;
  };

  beforeAll(async () => {
    // PostgreSQL goes only to a node labelled db=true: this one.
    leaveSwarm = await useSingleNodeSwarm();
    dir = await mkdtemp(join(tmpdir(), 'swarm-two-tier-'));
    await writeFile(join(dir, 'password'), randomBytes(12).toString('hex'), { mode: 0o600 });
    await docker(['secret', 'create', secret, join(dir, 'password')]);

    const started = performance.now();
    await docker(
      ['stack', 'deploy', '--compose-file', join(repoRoot, 'deploy/swarm/compose.two-tier.yml'), stack],
      // Port 0: two replicas on one node cannot share a host port, so each gets a free one.
      { env: { TAG: stage.tag, DB_PASSWORD_SECRET: secret, FRONTEND_PORT: '0', BACKEND_PORT: '0' } },
    );
    for (const [name, wanted] of [
      [`${stack}_db`, 1],
      [service.backend, 2],
      [service.frontend, 2],
    ] as const) {
      await waitFor(`${wanted} healthy ${name} tasks`, async () => ((await running(name)) === wanted ? true : undefined), 180_000, 1_000);
    }
    // Healthy is not connected: the backend starts before PostgreSQL answers and finds it later.
    const backends = await Promise.all((await tasksOf(service.backend)).map((c) => taskUrl(c, memberPort('two-tier', 'backend'))));
    await waitFor(
      'both backend replicas to be ready (database connected)',
      async () => {
        const statuses = await Promise.all(backends.map(async (url) => (await probe(`${url}/ready`)).status));
        return statuses.length === 2 && statuses.every((s) => s === 200) ? true : undefined;
      },
      60_000,
      500,
    );

    // Users reach the frontend's replicas as an operator would have them do it: through a reverse
    // proxy on the stack's (attachable) network whose upstream is the service name `frontend`. With
    // dnsrr that name resolves to every running replica, and the proxy resolves it again every second,
    // so it follows updates and scaling; a task's host-mode port comes and goes with that one task,
    // so no client can stay on it. (On several machines the proxy would be a service of the stack
    // itself, published on the edge nodes; one container on the network is the same thing here.)
    await docker([
      'run',
      '-d',
      '--name',
      proxy,
      '--network',
      `${stack}_app-network`,
      '-p',
      '127.0.0.1:0:80',
      '-e',
      'UPSTREAM_URL=http://frontend:3000',
      imageOf('proxy', stage.tag),
    ]);
    const proxyUrl = await publishedUrl(proxy, 80);
    await waitForHttp(proxyUrl, 30_000); // the frontend's /health, through the proxy
    users = `${proxyUrl}/api/users?limit=5`;
    await waitFor(
      'the users through the proxy, frontend and backend',
      async () => ((await probe(users)).status === 200 ? true : undefined),
      30_000,
    );
    for (const tier of ['frontend', 'backend'] as const) await docker(['tag', imageOf(tier, stage.tag), nextImage[tier]]);
    console.log(`swarm two-tier: deployed, every task healthy and ready, the proxy in front in ${seconds(performance.now() - started)}`);
  }, 300_000);

  afterAll(async () => {
    await dockerResult(['rm', '--force', proxy]);
    await removeStack(stack).catch((error: unknown) => console.warn(error));
    await dockerResult(['secret', 'rm', secret]);
    // Second tags only: the images stay for the stage's cleanup.
    await dockerResult(['image', 'rm', ...Object.values(nextImage)]);
    await leaveSwarm?.();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
    console.log(`swarm-two-tier.test.ts: ${seconds(performance.now() - fileStarted)} in all`);
  }, 180_000);

  it('docker service update --image of the backend, then of the frontend (start-first, one at a time), then a rollback of both: no failed request', async () => {
    for (const tier of ['backend', 'frontend'] as const) {
      await noFailedRequest(`rolling update of the ${tier} (2 replicas)`, async () => {
        await docker(['service', 'update', '--no-resolve-image', '--image', nextImage[tier], service[tier]], { timeoutMs: 240_000 });
      });
      expect(await imageOfService(service[tier])).toBe(nextImage[tier]);
    }
    // Both tiers at once, as an operator takes a release of both back; one rollback after the other
    // would add half a minute to the stage for the same two code paths.
    await noFailedRequest('rollback of the backend and the frontend at once', async () => {
      await Promise.all(Object.values(service).map((name) => docker(['service', 'rollback', name], { timeoutMs: 240_000 })));
    });
    for (const tier of ['backend', 'frontend'] as const) expect(await imageOfService(service[tier])).toBe(imageOf(tier, stage.tag));
  }, 600_000);

  /**
   * Scaling up adds capacity only if the new tasks get requests: every task of the tier answers a
   * share of a few seconds of load. (The frontend once kept its kept-alive connections to the old
   * backend tasks: the two new ones got 0 of about 10,500 requests in 20 s.)
   */
  const everyTaskServes = async (tier: 'frontend' | 'backend'): Promise<void> => {
    const urls = await Promise.all((await tasksOf(service[tier])).map((c) => taskUrl(c, memberPort('two-tier', tier))));
    const before = await Promise.all(urls.map(usersServed));
    await underLoad({ 'ts-proxy': users }, `swarm two-tier: the ${tier}'s ${urls.length} tasks`, () => sleep(3_000));
    const served = (await Promise.all(urls.map(usersServed))).map((count, i) => count - (before[i] ?? 0));
    console.log(`swarm two-tier: GET /api/users answered by each ${tier} task in 3 s: ${served.join(', ')}`);
    for (const count of served) expect(count, `${tier} tasks' shares: ${served.join(', ')}`).toBeGreaterThan(0);
  };

  it('docker service scale of the backend, then of the frontend, 2 -> 4 -> 2: no failed request, every new task serving', async () => {
    for (const tier of ['backend', 'frontend'] as const) {
      for (const [from, to] of [
        [2, 4],
        [4, 2],
      ] as const) {
        await noFailedRequest(`scale the ${tier} ${from} -> ${to}`, async () => {
          await docker(['service', 'scale', `${service[tier]}=${to}`], { timeoutMs: 240_000 });
        });
        expect(await running(service[tier])).toBe(to);
        if (to > from) await everyTaskServes(tier);
      }
    }
  }, 600_000);
});
