import { randomBytes } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { fetchUserList, uniqueEmail } from '@sample-services/testing/contract/users';
import { docker, probe, repoRoot, waitFor } from './support/docker.js';
import { underLoad } from './support/load.js';
import { openCluster, type Cluster } from './support/swarm-cluster.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** Variant A names the container that answered GET / in its body. */
const hostnameOf = (body: string): string | undefined => (JSON.parse(body) as { hostname?: string }).hostname;

/**
 * The simple and database stacks (deploy/swarm/*.yml as a user deploys them) on three engines: a
 * manager and two workers made by deploy/swarm/multi-node/cluster.sh, with overlay traffic between
 * them. Each operation runs under load (4 client loops) and prints one line with its counts.
 */
describe.skipIf(stage.skipReason !== undefined)('a swarm of three nodes (deploy/swarm/multi-node/cluster.sh)', () => {
  const fileStarted = performance.now();
  let cluster: Cluster;
  let nodes: string[] = [];
  let proxyUrl = '';
  let dir = '';

  const swarm = (args: string[], timeoutMs?: number): Promise<string> => cluster.swarm(args, { timeoutMs });
  /** Nodes of a service's running tasks (with a health check, a task runs once it has passed). */
  const runningOn = async (service: string): Promise<string[]> =>
    (await swarm(['service', 'ps', service, '--filter', 'desired-state=running', '--format', '{{.Node}} {{.CurrentState}}']))
      .split('\n')
      .filter((line) => / Running /.test(line))
      .map((line) => line.split(' ')[0] ?? '');
  /** Hostnames (container ids) of variant A's replicas on one node, from that node's own engine. */
  const webHostsOn = async (node: string): Promise<string[]> =>
    (await cluster.onNode(node, ['ps', '--filter', 'label=com.docker.swarm.service.name=simple_web', '--format', '{{.ID}}']))
      .split('\n')
      .filter(Boolean);

  /**
   * The cluster with both stacks running. beforeAll only starts this and every test awaits it first:
   * vitest reports the tests of a failed beforeAll as skipped, and a cluster that cannot be brought up
   * (an error or a hang) must fail them.
   */
  const setUp = async (): Promise<void> => {
    cluster = await openCluster(stage);
    const started = performance.now();
    await cluster.up();
    const upIn = performance.now() - started;
    nodes = [cluster.manager, ...cluster.workers];
    proxyUrl = `http://${await cluster.ipOf(cluster.manager)}`;
    // The secret's file is read by this client, as a user's would be.
    dir = await mkdtemp(join(tmpdir(), 'swarm-multinode-'));
    await writeFile(join(dir, 'password'), randomBytes(12).toString('hex'), { mode: 0o600 });
    await swarm(['secret', 'create', 'db-password', join(dir, 'password')]);
    for (const stack of ['simple', 'database']) {
      const file = join(repoRoot, 'deploy/swarm', `compose.${stack}.yml`);
      await cluster.swarm(['stack', 'deploy', '--compose-file', file, stack], { env: { TAG: stage.tag } });
    }
    const wanted = { simple_web: 3, simple_proxy: 1, database_web: 2, database_db: 1 };
    for (const [service, count] of Object.entries(wanted)) {
      const running = async (): Promise<true | undefined> => ((await runningOn(service)).length === count ? true : undefined);
      await waitFor(`${count} running ${service} tasks`, running, 180_000, 1_000);
    }
    console.log(
      `multi-node: cluster up in ${seconds(upIn)} (node image, 3 engines, swarm, images loaded), both stacks running ${seconds(performance.now() - started - upIn)} later`,
    );
  };
  let ready: Promise<void>;

  beforeAll(() => {
    ready = setUp();
  });

  beforeEach(async () => {
    await ready;
  }, 600_000);

  afterAll(async () => {
    await cluster?.down();
    if (dir !== '') await rm(dir, { recursive: true, force: true });
    console.log(`swarm-multinode.test.ts: ${seconds(performance.now() - fileStarted)} in all`);
  }, 180_000);

  it('spreads web over the three nodes, and requests through nginx reach the replicas on every node', async () => {
    const hostsByNode = await Promise.all(nodes.map(webHostsOn));
    expect(await runningOn('simple_proxy')).toEqual([cluster.manager]);
    const { nginx: report } = await underLoad({ nginx: `${proxyUrl}/` }, 'multi-node: web on 3 nodes', () => sleep(5_000), {
      replicaOf: hostnameOf,
    });
    const perNode = hostsByNode.map((hosts) => hosts.reduce((sum, host) => sum + (report.replicas.get(host)?.count ?? 0), 0));
    console.log(`multi-node: answers per node (${nodes.join(', ')}): ${perNode.join(' / ')}`);
    expect(report.failures).toEqual({});
    for (const [i, node] of nodes.entries()) expect(perNode[i], `answers from ${node}`).toBeGreaterThan(0);
  });

  it('keeps PostgreSQL on the db=true node with its data across a restart of its service', async () => {
    const webNodes = await runningOn('database_web');
    const webUrls = await Promise.all(webNodes.map(async (node) => `http://${await cluster.ipOf(node)}:5000`));
    expect(await runningOn('database_db')).toEqual([cluster.dbNode]);
    const emails = Array.from({ length: 10 }, () => uniqueEmail('multinode'));
    for (const [i, email] of emails.entries()) {
      const res = await fetch(`${webUrls[i % webUrls.length]}/api/users`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'Multi Node', email }),
      });
      expect(res.status, email).toBe(201);
    }
    const taskBefore = await swarm(['service', 'ps', '-q', '--filter', 'desired-state=running', 'database_db']);
    const targets = Object.fromEntries(webNodes.map((node, i) => [node, `${webUrls[i]}/api/users?limit=5`]));
    const reports = await underLoad(targets, 'multi-node: PostgreSQL restarted (service update --force)', async () => {
      // stop-first (compose.database.yml): the old server stops before the new one opens the same volume.
      await swarm(['service', 'update', '--force', 'database_db'], 180_000);
      const ready = async (url: string): Promise<boolean> => (await probe(`${url}/ready`)).status === 200;
      await waitFor(
        'both replicas ready again',
        async () => ((await Promise.all(webUrls.map(ready))).every(Boolean) ? true : undefined),
        60_000,
      );
    });
    expect(await swarm(['service', 'ps', '-q', '--filter', 'desired-state=running', 'database_db'])).not.toBe(taskBefore);
    expect(await runningOn('database_db')).toEqual([cluster.dbNode]);
    for (const url of webUrls) expect((await fetchUserList(url)).users.map((u) => u.email)).toEqual(expect.arrayContaining(emails));
    for (const [node, report] of Object.entries(reports)) {
      const span = report.failureTimes.length > 0 ? seconds(Math.max(...report.failureTimes) - Math.min(...report.failureTimes)) : '0 s';
      console.log(
        `multi-node: through ${node} B answered 503 for ${span} while PostgreSQL restarted; ${emails.length}/${emails.length} users read back`,
      );
      // While PostgreSQL is down, B answers 503 at once: nothing else fails, nothing hangs.
      expect(
        Object.keys(report.failures).filter((kind) => kind !== 'status 503'),
        node,
      ).toEqual([]);
    }
  }, 240_000);

  it('reschedules the web task of a lost worker, with failed requests only while its address vanishes', async () => {
    const victim = cluster.workers[1];
    const hostsBefore = new Set((await Promise.all(nodes.map(webHostsOn))).flat());
    expect(await webHostsOn(victim), `a web replica on ${victim}`).not.toEqual([]);
    const live = nodes.filter((node) => node !== victim);
    let killedAt = 0;
    let downAt = 0;
    let servingAt = 0;
    const { nginx: report } = await underLoad(
      { nginx: `${proxyUrl}/` },
      `multi-node: ${victim} killed`,
      async ({ nginx: seen }) => {
        killedAt = Date.now();
        await docker(['kill', victim]); // the machine is gone: its engine and every task with it
        downAt = await waitFor(
          `${victim} to be down`,
          async () => ((await swarm(['node', 'inspect', victim, '--format', '{{.Status.State}}'])) === 'down' ? Date.now() : undefined),
          60_000,
        );
        servingAt = await waitFor(
          'the replacement replica to answer through nginx',
          async () => {
            const hosts = (await Promise.all(live.map(webHostsOn))).flat().filter((host) => !hostsBefore.has(host));
            return hosts.map((host) => seen.replicas.get(host)?.first).find((at) => at !== undefined);
          },
          120_000,
          1_000,
        );
      },
      { replicaOf: hostnameOf },
    );
    console.log(
      `multi-node: ${victim} killed: ${report.failed} failed of ${report.requests}, node down after ${seconds(downAt - killedAt)}, replacement serving after ${seconds(servingAt - killedAt)}`,
    );
    expect((await runningOn('simple_web')).filter((node) => node !== victim)).toHaveLength(3);
    // At most the requests each loop had in flight on the lost replica when it went (a 10 s timeout).
    expect(report.failed).toBeLessThanOrEqual(4);
    for (const at of report.failureTimes) expect(at - killedAt, 'a failure long after the kill').toBeLessThan(15_000);
  }, 240_000);
});

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
