import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { simpleContract } from '@sample-services/testing/contract/simple';
import { freePort } from '@sample-services/testing/free-port';
import { docker, dockerResult, probe, repoRoot, waitFor, waitForHttp } from './support/docker.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

/** Running replicas of a service, from `docker service ls` (e.g. "3/3" -> 3 of 3). */
async function replicas(service: string): Promise<{ running: number; wanted: number }> {
  const line = await docker(['service', 'ls', '--filter', `name=${service}`, '--format', '{{.Name}} {{.Replicas}}']);
  const match = new RegExp(`^${service} (\\d+)/(\\d+)`, 'm').exec(line);
  return { running: Number(match?.[1] ?? 0), wanted: Number(match?.[2] ?? -1) };
}

/** Host names that answer GET / through the proxy, over `attempts` requests. */
async function hostnamesBehind(baseUrl: string, attempts: number): Promise<Set<string>> {
  const seen = new Set<string>();
  for (let i = 0; i < attempts; i++) {
    const res = await probe(`${baseUrl}/`);
    if (res.status === 200) seen.add(((await res.json()) as { hostname: string }).hostname);
  }
  return seen;
}

describe.skipIf(stage.skipReason !== undefined)('simple stack on Docker Swarm (deploy/swarm/compose.simple.yml)', () => {
  const name = `swarm${stage.runId}`;
  let initializedHere = false;
  let proxyUrl = '';

  beforeAll(async () => {
    const state = await docker(['info', '--format', '{{.Swarm.LocalNodeState}}']);
    if (state !== 'active') {
      await docker(['swarm', 'init', '--advertise-addr', '127.0.0.1']);
      initializedHere = true;
    }
    const port = await freePort();
    proxyUrl = `http://127.0.0.1:${port}`;
    await docker(['stack', 'deploy', '--compose-file', `${repoRoot}deploy/swarm/compose.simple.yml`, name], {
      env: { TAG: stage.tag, PROXY_PORT: String(port), WEB_REPLICAS: '3' },
    });
  });

  afterAll(async () => {
    await dockerResult(['stack', 'rm', name]);
    // The stack's network goes once its tasks are gone; leaving the swarm before that fails.
    await waitFor(
      'the stack to be removed',
      async () => ((await docker(['network', 'ls', '-q', '--filter', `name=${name}_`])) === '' ? true : undefined),
      60_000,
    );
    if (initializedHere) {
      await docker(['swarm', 'leave', '--force']);
      await dockerResult(['network', 'rm', 'docker_gwbridge']); // created by swarm init, left by leave
    }
  });

  it('runs three healthy web replicas and the proxy', async () => {
    await waitFor('3 of 3 web replicas', async () => ((await replicas(`${name}_web`)).running === 3 ? true : undefined), 180_000, 2_000);
    await waitFor('the proxy', async () => ((await replicas(`${name}_proxy`)).running === 1 ? true : undefined), 60_000, 1_000);
    await waitForHttp(proxyUrl, 60_000);
  });

  it('spreads requests through nginx over every replica', async () => {
    const seen = await waitFor(
      'answers from 3 replicas',
      async () => {
        const names = await hostnamesBehind(proxyUrl, 30);
        return names.size === 3 ? names : undefined;
      },
      60_000,
      1_000,
    );
    expect(seen.size).toBe(3);
  });

  it('applies the resource limits and mounts nginx.conf as a read-only config', async () => {
    const limits = JSON.parse(
      await docker(['service', 'inspect', `${name}_web`, '--format', '{{json .Spec.TaskTemplate.Resources.Limits}}']),
    ) as {
      NanoCPUs: number;
      MemoryBytes: number;
    };
    expect(limits).toEqual({ NanoCPUs: 1e9, MemoryBytes: 512 * 1024 * 1024 });
    const task = await docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${name}_proxy`]);
    const written = await dockerResult(['exec', task.split('\n')[0] ?? '', 'sh', '-c', 'echo x >> /etc/nginx/nginx.conf']);
    expect(written.code).not.toBe(0);
  });

  describe('variant A through the swarm proxy', () => {
    simpleContract(() => proxyUrl, { environment: 'production' });
  });

  it('replaces a replica that dies', async () => {
    const webContainers = async (): Promise<string[]> =>
      (await docker(['ps', '-q', '--filter', `label=com.docker.swarm.service.name=${name}_web`])).split('\n').filter(Boolean);
    const [victim] = await webContainers();
    await docker(['kill', victim ?? '']);
    // The service counts 3/3 again only once a new replica is healthy; the victim must be gone.
    const running = await waitFor(
      'a healthy replacement replica',
      async () => {
        const current = await webContainers();
        const { running: healthy } = await replicas(`${name}_web`);
        return healthy === 3 && current.length === 3 && !current.includes(victim ?? '') ? current : undefined;
      },
      180_000,
      2_000,
    );
    expect(running).not.toContain(victim);
    expect(running).toHaveLength(3);
    // Past waitFor's 180 s, so a slow replacement fails with its own message (a health probe every 30 s).
  }, 200_000);
});
