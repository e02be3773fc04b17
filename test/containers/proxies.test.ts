import { request } from 'node:http';
import { services } from '@sample-services/manifest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { commonContract } from '@sample-services/testing/contract/common';
import { simpleContract } from '@sample-services/testing/contract/simple';
import { docker, publishedUrl, repoRoot, waitForHttp } from './support/docker.js';
import { imageOf } from './support/images.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

/** GET / with our own Host and X-Forwarded-For (fetch cannot set Host); returns the JSON body. */
function getWithHeaders(baseUrl: string, headers: Record<string, string>): Promise<{ headers: Record<string, string> }> {
  return new Promise((resolve, reject) => {
    const req = request(`${baseUrl}/`, { headers }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve(JSON.parse(body) as { headers: Record<string, string> }));
    });
    req.on('error', reject).end();
  });
}

/**
 * Both proxies on user-defined networks, reaching their upstream by the name `web`: the
 * TypeScript proxy image in front of the variant A image, and nginx with the repository's
 * nginx.conf (mounted read-only) and the TypeScript proxy in front of an upstream that echoes
 * the headers it receives.
 */
describe.skipIf(stage.skipReason !== undefined)('proxies on user-defined networks', () => {
  const name = (what: string): string => `sample-${stage.runId}-${what}`;
  const [appNet, echoNet] = [name('app-net'), name('echo-net')];
  const [web, proxy, echo, nginx, echoProxy] = ['web', 'proxy', 'echo', 'nginx', 'echo-proxy'].map(name) as [
    string,
    string,
    string,
    string,
    string,
  ];
  const urls = { proxy: '', nginx: '', echoProxy: '' };
  // nginx.conf listens on the proxy's port too; both proxies' upstream is `web` on variant A's port.
  const [proxyPort, webPort] = [services.proxy.port, services.simple.port];
  let webHostname = '';

  beforeAll(async () => {
    for (const net of [appNet, echoNet]) await docker(['network', 'create', net]);
    const runDetached = (args: string[]): Promise<string> => docker(['run', '-d', '--cap-drop=ALL', ...args]);
    await runDetached([
      '--name',
      web,
      '--network',
      appNet,
      '--network-alias',
      'web',
      '--read-only',
      '-v',
      `${name('logs')}:/app/logs`,
      imageOf('simple', stage.tag),
    ]);
    await runDetached(['--name', echo, '--network', echoNet, '--network-alias', 'web', '--user', '1000:1000', '-e', `PORT=${webPort}`,
      '-v', `${repoRoot}/test/containers/fixtures:/fixtures:ro`, 'node:24-bookworm-slim', 'node', '/fixtures/echo-headers.mjs']); // prettier-ignore
    await runDetached(['--name', proxy, '--network', appNet, '-p', `127.0.0.1:0:${proxyPort}`, imageOf('proxy', stage.tag)]);
    await runDetached(['--name', echoProxy, '--network', echoNet, '-p', `127.0.0.1:0:${proxyPort}`, imageOf('proxy', stage.tag)]);
    await docker(['run', '-d', '--name', nginx, '--network', echoNet, '-p', `127.0.0.1:0:${proxyPort}`,
      '-v', `${repoRoot}/deploy/nginx/nginx.conf:/etc/nginx/nginx.conf:ro`, 'nginx:1.30']); // prettier-ignore
    [urls.proxy, urls.echoProxy, urls.nginx] = await Promise.all([
      publishedUrl(proxy, proxyPort),
      publishedUrl(echoProxy, proxyPort),
      publishedUrl(nginx, proxyPort),
    ]);
    // Every proxy must answer before a test uses it: a published port accepts connections (and
    // resets them) before the process inside listens. The echo upstream answers /health too.
    await Promise.all(Object.values(urls).map((url) => waitForHttp(url)));
    webHostname = await docker(['inspect', '--format', '{{.Config.Hostname}}', web]);
  });
  afterAll(async () => {
    await docker(['rm', '--force', '--volumes', web, proxy, echo, nginx, echoProxy]).catch(() => undefined);
    await docker(['volume', 'rm', name('logs')]).catch(() => undefined);
    await docker(['network', 'rm', appNet, echoNet]).catch(() => undefined);
  });

  it('network inspect lists the containers attached to each network', async () => {
    const attached = async (net: string): Promise<string[]> =>
      Object.values(
        JSON.parse(await docker(['network', 'inspect', '--format', '{{json .Containers}}', net])) as Record<string, { Name: string }>,
      )
        .map((c) => c.Name)
        .sort();
    expect(await attached(appNet)).toEqual([proxy, web].sort());
    expect(await attached(echoNet)).toEqual([echo, echoProxy, nginx].sort());
  });

  describe('the TypeScript proxy image in front of variant A', () => {
    simpleContract(() => urls.proxy, { environment: 'production' });
    commonContract(() => urls.proxy);

    it('reaches the web container by its name', async () => {
      const body = (await (await fetch(`${urls.proxy}/`)).json()) as { hostname: string };
      expect(body.hostname).toBe(webHostname);
    });
  });

  it.each([
    ['nginx with the repository nginx.conf', 'nginx'],
    ['the TypeScript proxy image', 'echoProxy'],
  ] as const)('%s sets Host, X-Real-IP and X-Forwarded-For (spec 4.4)', async (_label, which) => {
    const echoed = await getWithHeaders(urls[which], { host: 'Example.test:8080', 'x-forwarded-for': '203.0.113.7' });
    const clientAddress = echoed.headers['x-real-ip'] ?? '';
    // The client as the proxy sees it: the network's gateway, through which the published port arrives.
    expect(clientAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(echoed.headers.host).toBe('example.test');
    expect(echoed.headers['x-forwarded-for']).toBe(`203.0.113.7, ${clientAddress}`);
  });
});
