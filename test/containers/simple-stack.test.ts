import { services, startedLine } from '@sample-services/manifest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { commonContract } from '@sample-services/testing/contract/common';
import { simpleContract } from '@sample-services/testing/contract/simple';
import { docker, inspectJson, waitFor, waitForHttp } from './support/docker.js';
import { expectHardenedNginx, expectHardenedService } from './support/hardening.js';
import { imageOf } from './support/images.js';
import { healthyWithinMs, leftovers, openStack, startAndHealthy, type Stack } from './support/stack.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

describe.skipIf(stage.skipReason !== undefined)('simple stack (deploy/compose/compose.simple.yml)', () => {
  let stack: Stack;
  const urls = { web: '', proxy: '' };
  beforeAll(async () => {
    stack = await openStack('simple', stage);
  });
  afterAll(async () => {
    await stack.remove();
  });

  it('build builds the web image from the Dockerfile', async () => {
    // With the provenance the stage built the image with (as docs/operations.md's docker build takes it): the
    // tag moves to this build, and images.test.ts checks its OCI labels whichever file runs first.
    const provenance = Object.entries(stage.provenance ?? {}).flatMap(([name, value]) => ['--build-arg', `${name}=${value}`]);
    const { stdout } = await stack.runOutput(['--progress', 'plain', 'build', ...provenance, 'web'], 600_000);
    // BuildKit's plain progress names the tag it wrote.
    expect(stdout).toContain(`naming to docker.io/library/${imageOf('simple', stage.tag)}`);
    const revision = await docker([
      'image',
      'inspect',
      '--format',
      '{{index .Config.Labels "org.opencontainers.image.revision"}}',
      imageOf('simple', stage.tag),
    ]);
    expect(revision).toBe(stage.provenance?.REVISION);
  });

  it('up -d --wait starts web, then the nginx proxy, web healthy within its start period; ps lists both', async () => {
    await stack.upAndWait();
    urls.web = await stack.url('web');
    urls.proxy = await stack.url('proxy');
    await waitForHttp(urls.web);
    await waitForHttp(urls.proxy);
    const [web, proxy] = await Promise.all([stack.container('web'), stack.container('proxy')].map(async (id) => startAndHealthy(await id)));
    expect(proxy?.started).toBeGreaterThanOrEqual(web?.started ?? Infinity);
    expect((web?.firstHealthy ?? Infinity) - (web?.started ?? 0)).toBeLessThan(healthyWithinMs);
    // Compose v2 names a service's containers <project>-<service>-<n>.
    const ps = await stack.run(['ps']);
    expect(ps).toMatch(new RegExp(`${stack.project}-web-1 .* Up .*\\(healthy\\)`));
    expect(ps).toMatch(new RegExp(`${stack.project}-proxy-1 .* Up`));
  });

  describe('variant A on its published port', () => {
    simpleContract(() => urls.web, { environment: 'production' });
    commonContract(() => urls.web);
  });
  describe('variant A through nginx', () => {
    simpleContract(() => urls.proxy, { environment: 'production' });
    commonContract(() => urls.proxy);
  });

  it('declares app-logs at /app/logs, app-network, the read-only nginx.conf and resolver script, and restart unless-stopped', async () => {
    for (const service of ['web', 'proxy']) {
      const id = await stack.container(service);
      expect(await docker(['inspect', '--format', '{{.HostConfig.RestartPolicy.Name}}', id])).toBe('unless-stopped');
      expect(Object.keys(await inspectJson<object>(id, '{{json .NetworkSettings.Networks}}'))).toEqual([`${stack.project}_app-network`]);
    }
    const mounts = async (service: string): Promise<{ Name?: string; Destination: string; RW: boolean }[]> =>
      inspectJson(await stack.container(service), '{{json .Mounts}}');
    expect(await mounts('web')).toEqual([
      expect.objectContaining({ Name: `${stack.project}_app-logs`, Destination: '/app/logs', RW: true }),
    ]);
    // nginx.conf, and the script that points its resolver at the engine's DNS (deploy/nginx/resolver.sh).
    const proxyMounts = await mounts('proxy');
    expect(proxyMounts).toHaveLength(2);
    expect(proxyMounts).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ Destination: '/etc/nginx/nginx.conf', RW: false }),
        expect.objectContaining({ Destination: '/docker-entrypoint.d/15-resolver.sh', RW: false }),
      ]),
    );
  });

  it("runs web and nginx hardened: read-only roots, no capabilities (nginx keeps a root master's four), init, limits", async () => {
    await expectHardenedService(await stack.container('web'));
    await expectHardenedNginx(await stack.container('proxy'));
  });

  it('logs web shows the start-up line; exec web runs a command in the service', async () => {
    expect(await stack.run(['logs', '--no-color', 'web'])).toContain(`"msg":"${startedLine('simple', services.simple.port)}"`);
    expect(await stack.run(['exec', '-T', 'web', 'ls', '/app/logs'])).toBe('simple.log');
  });

  it('web becomes healthy by its compose health check', async () => {
    const web = await stack.container('web');
    await waitFor(
      'web to be healthy',
      async () => ((await startAndHealthy(web)).firstHealthy !== undefined ? true : undefined),
      60_000,
      1_000,
    );
  });

  it('up -d --scale web=3 runs three replicas, and the proxy reaches all of them without a restart', async () => {
    const proxyStarted = await docker(['inspect', '--format', '{{.State.StartedAt}}', await stack.container('proxy')]);
    await stack.run(['up', '-d', '--scale', 'web=3']);
    const ids = (await stack.run(['ps', '-q', 'web'])).split('\n');
    expect(ids).toHaveLength(3);
    const hostnames = (await Promise.all(ids.map((id) => docker(['inspect', '--format', '{{.Config.Hostname}}', id])))).sort();
    // nginx looks `web` up again once its answer is 2 s old: every replica answers soon after it listens.
    const seen = new Set<string>();
    await waitFor(
      'the proxy to reach all three replicas',
      async () => {
        for (let i = 0; i < 12; i += 1) {
          const res = await fetch(`${urls.proxy}/`);
          if (res.ok) seen.add(((await res.json()) as { hostname: string }).hostname);
        }
        return seen.size === 3 ? true : undefined;
      },
      30_000,
      500,
    );
    expect([...seen].sort()).toEqual(hostnames);
    expect(await docker(['inspect', '--format', '{{.State.StartedAt}}', await stack.container('proxy')])).toBe(proxyStarted);
  });

  it('down -v removes its containers, network and volume', async () => {
    await stack.run(['down', '-v']);
    expect(await leftovers(stack.project)).toEqual([]);
  });
});
