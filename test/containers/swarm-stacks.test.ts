import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { backendContract } from '@sample-services/testing/contract/backend';
import { commonContract } from '@sample-services/testing/contract/common';
import { databaseContract } from '@sample-services/testing/contract/database';
import { frontendContract } from '@sample-services/testing/contract/frontend';
import { fetchUserList, uniqueEmail } from '@sample-services/testing/contract/users';
import { parsePrometheusText, sampleValue } from '@sample-services/testing/prometheus-text';
import { docker, dockerResult, probe, publishedUrl, repoRoot, waitFor, waitForHttp } from './support/docker.js';
import { underLoad, type LoadReport } from './support/load.js';
import { imageOf, memberPort, type StackName } from './support/images.js';
import { removeStack, running, taskUrl, tasksOf, useSingleNodeSwarm } from './support/single-node-swarm.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** GET /api/users answered 200 by one task so far, from its own /metrics on its host-published port. */
async function usersServed(url: string): Promise<number> {
  const metrics = parsePrometheusText(await (await fetch(`${url}/metrics`)).text());
  return sampleValue(metrics, 'http_requests_total', { method: 'GET', route: '/api/users', status_code: '200' }) ?? 0;
}

/** The swarm stacks with PostgreSQL: their members' replicas as the files default them (db: one). */
const deployed = {
  database: { replicas: { web: 2, db: 1 } },
  'two-tier': { replicas: { frontend: 2, backend: 2, db: 1 } },
} satisfies Partial<Record<StackName, { replicas: Record<string, number> }>>;
type SwarmStack = keyof typeof deployed;

describe.skipIf(stage.skipReason !== undefined)('database and two-tier stacks on Docker Swarm (deploy/swarm/*.yml)', () => {
  const fileStarted = performance.now();
  const stackName = (stack: SwarmStack): string => `sw${stack.replace('-', '')}${stage.runId}`;
  const secret = `sample-db-password-${stage.runId}`;
  // Characters a URL would misread, to show DATABASE_PASSWORD_FILE's encoding end to end.
  const password = `p@ss/w:rd%?#&${randomBytes(9).toString('hex')}`;
  let leaveSwarm: (() => Promise<void>) | undefined;
  let dir = '';
  /** Published URLs of each member's replicas, by `<stack>/<member>`. */
  const urls = new Map<string, string[]>();
  const urlOf = (stack: SwarmStack, as: string, index = 0): string => urls.get(`${stack}/${as}`)?.[index] ?? '';

  beforeAll(async () => {
    // PostgreSQL goes only to a node labelled db=true: this one.
    leaveSwarm = await useSingleNodeSwarm();
    // The secret from a file with a trailing newline, as `echo pw > file` writes it: both readers drop it.
    dir = await mkdtemp(join(tmpdir(), 'swarm-stacks-'));
    await writeFile(join(dir, 'password'), `${password}\n`, { mode: 0o600 });
    await docker(['secret', 'create', secret, join(dir, 'password')]);

    const started = performance.now();
    // Both stacks at once: most of the wait is the first health probe (30 s), the same for all.
    await Promise.all(
      (Object.keys(deployed) as SwarmStack[]).map((stack) =>
        docker(['stack', 'deploy', '--compose-file', join(repoRoot, 'deploy/swarm', `compose.${stack}.yml`), stackName(stack)], {
          // Port 0: two replicas on one node cannot share a host port, so each gets a free one.
          env: {
            TAG: stage.tag,
            DB_PASSWORD_SECRET: secret,
            POSTGRES_USER: 'tester',
            WEB_PORT: '0',
            FRONTEND_PORT: '0',
            BACKEND_PORT: '0',
          },
        }),
      ),
    );
    for (const stack of Object.keys(deployed) as SwarmStack[]) {
      for (const [as, wanted] of Object.entries(deployed[stack].replicas)) {
        const service = `${stackName(stack)}_${as}`;
        await waitFor(
          `${wanted} healthy ${service} tasks`,
          async () => ((await running(service)) === wanted ? true : undefined),
          180_000,
          1_000,
        );
        const containers = await tasksOf(service);
        for (const container of containers) {
          expect(await docker(['inspect', '--format', '{{.State.Health.Status}}', container]), `${service} ${container}`).toBe('healthy');
        }
        if (as !== 'db') urls.set(`${stack}/${as}`, await Promise.all(containers.map((c) => taskUrl(c, memberPort(stack, as)))));
      }
    }
    // Healthy is not connected: the services start before PostgreSQL answers and find it later.
    await waitFor(
      'every replica of web and backend to be ready (database connected)',
      async () => {
        const replicas = [...(urls.get('database/web') ?? []), ...(urls.get('two-tier/backend') ?? [])];
        const statuses = await Promise.all(replicas.map(async (url) => (await probe(`${url}/ready`)).status));
        return statuses.length === 4 && statuses.every((s) => s === 200) ? true : undefined;
      },
      60_000,
      500,
    );
    console.log(`swarm stacks: deployed, every task healthy and ready in ${seconds(performance.now() - started)}`);
  }, 300_000);

  afterAll(async () => {
    await Promise.all((Object.keys(deployed) as SwarmStack[]).map((stack) => removeStack(stackName(stack)).catch(() => undefined)));
    await dockerResult(['secret', 'rm', secret]);
    await leaveSwarm?.();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
    console.log(`swarm-stacks.test.ts: ${seconds(performance.now() - fileStarted)} in all`);
  }, 180_000);

  it('publishes every replica in host mode and places PostgreSQL on the labelled node', async () => {
    expect([...urls.keys()].sort()).toEqual(['database/web', 'two-tier/backend', 'two-tier/frontend']);
    for (const [key, list] of urls) expect(new Set(list).size, `${key}: a port per replica`).toBe(2);
    for (const stack of Object.keys(deployed) as SwarmStack[]) {
      const db = `${stackName(stack)}_db`;
      const constraints = await docker(['service', 'inspect', db, '--format', '{{json .Spec.TaskTemplate.Placement.Constraints}}']);
      expect(JSON.parse(constraints)).toEqual(['node.labels.db == true']);
      const volumes = await docker(['volume', 'ls', '-q', '--filter', `label=com.docker.stack.namespace=${stackName(stack)}`]);
      expect(volumes.split('\n')).toContain(`${stackName(stack)}_postgres-data`);
    }
  });

  it('keeps the password out of every service spec and container environment: only the secret file', async () => {
    for (const stack of Object.keys(deployed) as SwarmStack[]) {
      for (const as of Object.keys(deployed[stack].replicas)) {
        const service = `${stackName(stack)}_${as}`;
        const spec = await docker(['service', 'inspect', service, '--format', '{{json .Spec.TaskTemplate.ContainerSpec}}']);
        expect(spec, service).not.toContain(password);
        expect(spec, service).not.toContain(encodeURIComponent(password));
        const { Env: env = [], Secrets: secrets = [] } = JSON.parse(spec) as {
          Env?: string[];
          Secrets?: { SecretName: string; File: { Name: string } }[];
        };
        const uses = as === 'frontend' ? [] : [{ name: secret, file: 'db-password' }];
        expect(
          secrets.map((s) => ({ name: s.SecretName, file: s.File.Name })),
          service,
        ).toEqual(uses);
        if (as === 'db') expect(env).toContain('POSTGRES_PASSWORD_FILE=/run/secrets/db-password');
        if (as === 'web' || as === 'backend') expect(env).toContain('DATABASE_PASSWORD_FILE=/run/secrets/db-password');
        for (const container of await tasksOf(service)) {
          expect(await docker(['inspect', '--format', '{{json .Config.Env}}', container]), container).not.toContain(password);
        }
      }
    }
  });

  describe('variant B (deploy/swarm/compose.database.yml) on a published replica port', () => {
    databaseContract(() => urlOf('database', 'web'));
    commonContract(() => urlOf('database', 'web'));

    it('both replicas serve the same PostgreSQL: a user created on one is listed by the other', async () => {
      const email = uniqueEmail('swarm');
      const created = await fetch(`${urlOf('database', 'web', 0)}/api/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Swarm', email }),
      });
      expect(created.status).toBe(201);
      const { users } = await fetchUserList(urlOf('database', 'web', 1));
      expect(users.map((u) => u.email)).toContain(email);
    });
  });

  describe('variant B under load through both proxies on the stack network', () => {
    const web = `${stackName('database')}_web`;
    const nextImage = `${imageOf('database', stage.tag)}-next`;
    const proxies = { nginx: `zd-sw-nginx-${stage.runId}`, 'ts-proxy': `zd-sw-ts-proxy-${stage.runId}` };
    const proxyUrls = { nginx: '', 'ts-proxy': '' };
    const listing = (): Record<keyof typeof proxies, string> => ({
      nginx: `${proxyUrls.nginx}/api/users?limit=5`,
      'ts-proxy': `${proxyUrls['ts-proxy']}/api/users?limit=5`,
    });
    const noFailures = (reports: Record<string, LoadReport>): void => {
      for (const [proxy, report] of Object.entries(reports)) expect(report.failures, proxy).toEqual({});
    };

    beforeAll(async () => {
      // A client reaches the replicas through a proxy: their host-mode ports come and go with them.
      // Both proxies join the stack's attachable network and follow `web` by Docker's DNS.
      const network = `${stackName('database')}_app-network`;
      const conf = join(dir, 'nginx.conf');
      await writeFile(conf, (await readFile(join(repoRoot, 'deploy/nginx/nginx.conf'), 'utf8')).replaceAll('web:3000', 'web:5000'));
      const publish = ['--network', network, '-p', '127.0.0.1:0:80'];
      await docker(['run', '-d', '--name', proxies.nginx, ...publish, '-v', `${conf}:/etc/nginx/nginx.conf:ro`, 'nginx:1.30']);
      await docker([
        'run',
        '-d',
        '--name',
        proxies['ts-proxy'],
        ...publish,
        '-e',
        'UPSTREAM_URL=http://web:5000',
        imageOf('proxy', stage.tag),
      ]);
      for (const proxy of ['nginx', 'ts-proxy'] as const) {
        proxyUrls[proxy] = await publishedUrl(proxies[proxy], 80);
        await waitForHttp(proxyUrls[proxy], 30_000);
      }
      await docker(['tag', imageOf('database', stage.tag), nextImage]);
    });
    afterAll(async () => {
      await dockerResult(['rm', '--force', ...Object.values(proxies)]);
      await dockerResult(['image', 'rm', nextImage]); // a second tag only: the image stays for the stage's cleanup
    });

    it('docker service update --image (start-first, one at a time), then docker service rollback: no failed request', async () => {
      const imageOfTasks = async (): Promise<string> =>
        docker(['service', 'inspect', web, '--format', '{{.Spec.TaskTemplate.ContainerSpec.Image}}']);
      noFailures(
        await underLoad(listing(), 'swarm: rolling update of web (2 replicas)', async () => {
          await docker(['service', 'update', '--no-resolve-image', '--image', nextImage, web], { timeoutMs: 240_000 });
        }),
      );
      expect(await imageOfTasks()).toBe(nextImage);
      noFailures(
        await underLoad(listing(), 'swarm: rollback of web', async () => {
          await docker(['service', 'rollback', web], { timeoutMs: 240_000 });
        }),
      );
      expect(await imageOfTasks()).toBe(imageOf('database', stage.tag));
    }, 600_000);

    it('docker service scale web=4, then web=2: no failed request', async () => {
      for (const [from, to] of [
        [2, 4],
        [4, 2],
      ] as const) {
        noFailures(
          await underLoad(listing(), `swarm: scale web ${from} -> ${to}`, async () => {
            await docker(['service', 'scale', `${web}=${to}`], { timeoutMs: 240_000 });
          }),
        );
        expect(await running(web)).toBe(to);
      }
    }, 600_000);

    it('PostgreSQL task killed: 503 JSON meanwhile (no hang), recovery by itself, every write answered 201 kept', async () => {
      const emails = Array.from({ length: 10 }, () => uniqueEmail('kill'));
      for (const email of emails) {
        const created = await fetch(`${proxyUrls['ts-proxy']}/api/users`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ name: 'Before the kill', email }),
        });
        expect(created.status).toBe(201);
      }
      const [db] = await tasksOf(`${stackName('database')}_db`);
      let killedAt = 0;
      const reports = await underLoad(listing(), 'swarm: PostgreSQL task killed', async () => {
        killedAt = Date.now();
        await docker(['kill', db ?? '']);
        for (const url of Object.values(listing())) {
          const down = await waitFor(
            'a 503 while the database is down',
            async () => {
              const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
              return res.status === 503 ? res : undefined;
            },
            30_000,
            200,
          );
          expect(down.headers.get('content-type')).toMatch(/^application\/json/);
          expect(await down.json()).toEqual({ error: expect.any(String) });
        }
        await waitFor(
          'both proxies to answer 200 again',
          async () => {
            const statuses = await Promise.all(Object.values(listing()).map(async (url) => (await probe(url)).status));
            return statuses.every((status) => status === 200) ? true : undefined;
          },
          120_000,
          500,
        );
      });
      for (const [proxy, report] of Object.entries(reports)) {
        // Down is said at once: only 503s, no timeout, no connection error.
        expect(Object.keys(report.failures), proxy).toEqual(['status 503']);
        const lastFailure = report.failureTimes.at(-1) ?? killedAt;
        console.log(
          `swarm: PostgreSQL task killed through ${proxy}: ${report.failed} answered 503, serving again ${seconds((report.successes.find((at) => at > lastFailure) ?? NaN) - killedAt)} after the kill`,
        );
      }
      const { users } = await fetchUserList(proxyUrls.nginx);
      expect(users.map((u) => u.email)).toEqual(expect.arrayContaining(emails));
    }, 600_000);
  });

  describe('two-tier (deploy/swarm/compose.two-tier.yml): the backend on a published replica port', () => {
    backendContract(() => urlOf('two-tier', 'backend'));
    commonContract(() => urlOf('two-tier', 'backend'));
  });

  describe('two-tier: the frontend on a published replica port, reaching the backend replicas by name', () => {
    frontendContract(
      () => urlOf('two-tier', 'frontend'),
      () => urlOf('two-tier', 'backend'),
    );
    commonContract(() => urlOf('two-tier', 'frontend'));

    it('every frontend replica answers the users from the backend', async () => {
      for (const url of urls.get('two-tier/frontend') ?? []) expect((await probe(`${url}/api/users`)).status, url).toBe(200);
    });
  });

  /**
   * The users page's API, frontend -> backend -> PostgreSQL, under load while each of our two services
   * is updated to a new image tag, rolled back, and scaled up and down. After the contract suites above:
   * the operations replace the tasks whose ports they used.
   */
  describe('two-tier under load through a proxy on the stack network', () => {
    const service = { frontend: `${stackName('two-tier')}_frontend`, backend: `${stackName('two-tier')}_backend` } as const;
    const proxy = `zd-sw2t-ts-proxy-${stage.runId}`;
    const nextImage = { frontend: `${imageOf('frontend', stage.tag)}-next`, backend: `${imageOf('backend', stage.tag)}-next` };
    let users = '';

    const imageOfService = (name: string): Promise<string> =>
      docker(['service', 'inspect', name, '--format', '{{.Spec.TaskTemplate.ContainerSpec.Image}}']);
    /** Loads GET /api/users through the proxy during `operation`; every non-2xx, connection error and timeout is a failure. */
    const noFailedRequest = async (label: string, operation: () => Promise<void>): Promise<void> => {
      const { 'ts-proxy': report } = await underLoad({ 'ts-proxy': users }, `swarm two-tier: ${label}`, operation);
      expect(report.failures, label).toEqual({});
      expect(report.ok, label).toBeGreaterThan(0);
    };

    beforeAll(async () => {
      // Users reach the frontend's replicas through a reverse proxy on the stack's (attachable) network
      // whose upstream is the service name `frontend`: with dnsrr it resolves to every running replica,
      // and the proxy resolves it again every second, so it follows updates and scaling. (On several
      // machines the proxy would be a service of the stack, published on the edge nodes.)
      await docker([
        'run',
        '-d',
        '--name',
        proxy,
        '--network',
        `${stackName('two-tier')}_app-network`,
        '-p',
        '127.0.0.1:0:80',
        '-e',
        'UPSTREAM_URL=http://frontend:3000',
        imageOf('proxy', stage.tag),
      ]);
      const proxyUrl = await publishedUrl(proxy, 80);
      await waitForHttp(proxyUrl, 30_000); // the frontend's /health, through the proxy
      users = `${proxyUrl}/api/users?limit=5`;
      await waitFor('the users through the proxy', async () => ((await probe(users)).status === 200 ? true : undefined), 30_000);
      for (const tier of ['frontend', 'backend'] as const) await docker(['tag', imageOf(tier, stage.tag), nextImage[tier]]);
    });
    afterAll(async () => {
      await dockerResult(['rm', '--force', proxy]);
      await dockerResult(['image', 'rm', ...Object.values(nextImage)]); // second tags only
    });

    it('docker service update --image of the backend, then of the frontend (start-first, one at a time), then a rollback of both: no failed request', async () => {
      for (const tier of ['backend', 'frontend'] as const) {
        await noFailedRequest(`rolling update of the ${tier} (2 replicas)`, async () => {
          await docker(['service', 'update', '--no-resolve-image', '--image', nextImage[tier], service[tier]], { timeoutMs: 240_000 });
        });
        expect(await imageOfService(service[tier])).toBe(nextImage[tier]);
      }
      // Both tiers at once, as an operator takes a release of both back.
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
      const taskUrls = await Promise.all((await tasksOf(service[tier])).map((c) => taskUrl(c, memberPort('two-tier', tier))));
      const before = await Promise.all(taskUrls.map(usersServed));
      await underLoad({ 'ts-proxy': users }, `swarm two-tier: the ${tier}'s ${taskUrls.length} tasks`, () => sleep(3_000));
      const served = (await Promise.all(taskUrls.map(usersServed))).map((count, i) => count - (before[i] ?? 0));
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

  it('stack rm and volume rm leave nothing of either stack', async () => {
    const started = performance.now();
    await Promise.all((Object.keys(deployed) as SwarmStack[]).map((stack) => removeStack(stackName(stack))));
    for (const stack of Object.keys(deployed) as SwarmStack[]) {
      const name = stackName(stack);
      expect(await docker(['service', 'ls', '-q', '--filter', `label=com.docker.stack.namespace=${name}`])).toBe('');
      expect(await docker(['volume', 'ls', '-q', '--filter', `label=com.docker.stack.namespace=${name}`])).toBe('');
    }
    console.log(`swarm stacks: removed with their volumes in ${seconds(performance.now() - started)}`);
  }, 120_000);
});
