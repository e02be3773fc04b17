import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '@sample-services/testing/free-port';
import { send, sendH2 } from '@sample-services/testing/http-request';
import { makeLocalCertificates, type LocalCertificates } from '@sample-services/testing/local-cert';
import { docker, waitForHttp } from './support/docker.js';
import { openStack, type Stack } from './support/stack.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

const MiB = 1024 * 1024;

/**
 * The simple stack with deploy/compose/compose.https.yml: the image's nginx (not the tests' host nginx) with
 * deploy/nginx/https.conf, the certificate folder scripts/local-cert.sh made, mounted read-only, and HTTPS
 * published on a host port other than 443, which the redirect must name (443 and an ephemeral port:
 * test/e2e/https-settings.test.ts).
 */
describe.skipIf(stage.skipReason !== undefined)('simple stack with HTTPS (compose.simple.yml + compose.https.yml)', () => {
  let certs: LocalCertificates;
  let stack: Stack;
  const urls = { plain: '', https: '' };
  let httpsPort: number;
  const trust = (): { ca: Buffer } => ({ ca: certs.ca });
  beforeAll(async () => {
    certs = await makeLocalCertificates();
    httpsPort = await freePort();
    stack = await openStack('simple', stage, undefined, {
      overrides: ['compose.https.yml'],
      env: { PROXY_HTTPS_PORT: `127.0.0.1:${httpsPort}`, TLS_CERT_DIR: certs.dir },
    });
    await stack.upAndWait();
    urls.plain = await stack.url('proxy');
    urls.https = (await stack.url('proxy', 443)).replace(/^http:/, 'https:');
    await waitForHttp(urls.plain);
  });
  afterAll(async () => {
    await stack?.remove();
    await certs?.remove();
  });

  it("starts the image's nginx with https.conf without an error; HSTS off by default", async () => {
    const logs = await docker(['logs', await stack.container('proxy')]);
    expect(logs).toContain(`the redirect to HTTPS names port ${httpsPort}`);
    expect(logs).toContain('no Strict-Transport-Security (HSTS_MAX_AGE is 0)');
    expect(logs).not.toMatch(/\[emerg\]|\[error\]/);
  });

  it('answers variant A over HTTPS with HTTP/1.1 and with HTTP/2, the certificate verified against the local authority', async () => {
    const http1 = await send(urls.https, { path: '/' }, trust());
    expect([http1.status, (http1.json() as { message: string }).message]).toEqual([200, 'Hello from Docker!']);
    const h2 = await sendH2(urls.https, { path: '/health' }, trust());
    expect([h2.alpnProtocol, h2.status, (h2.json() as { status: string }).status]).toEqual(['h2', 200, 'healthy']);
    expect(h2.headers['x-request-id']).toEqual(expect.any(String));
    expect(h2.headers['strict-transport-security']).toBeUndefined();
  });

  it("answers nginx's JSON errors over HTTP/2: 413 for a body over 1 MiB, 400 for a path that cannot be decoded", async () => {
    const tooLarge = await sendH2(urls.https, { method: 'POST', path: '/', body: randomBytes(MiB + 1) }, trust());
    expect([tooLarge.status, tooLarge.json()]).toEqual([413, { error: 'Request body is too large' }]);
    const bad = await sendH2(urls.https, { path: '/%zz' }, trust());
    expect([bad.status, bad.headers['content-type']]).toEqual([400, 'application/json']);
  });

  it('redirects the plain port with 308 to the host port HTTPS is published on, except /health, which probes keep reaching', async () => {
    expect(urls.https).toBe(`https://127.0.0.1:${httpsPort}`);
    const redirected = await send(urls.plain, { path: '/api/users?page=2', headers: { host: 'Shop.Example' } });
    expect([redirected.status, redirected.headers.location]).toEqual([308, `https://shop.example:${httpsPort}/api/users?page=2`]);
    const { origin, pathname, search } = new URL(
      (await send(urls.plain, { path: '/?from=plain', headers: { host: 'localhost' } })).headers.location ?? '',
    );
    expect(origin).toBe(`https://localhost:${httpsPort}`);
    const followed = await send(origin, { path: `${pathname}${search}` }, trust());
    expect([followed.status, (followed.json() as { message: string }).message]).toEqual([200, 'Hello from Docker!']);
    const health = await send(urls.plain, { path: '/health' });
    expect([health.status, (health.json() as { status: string }).status]).toEqual([200, 'healthy']);
  });

  it('refuses TLS 1.1 (openssl s_client)', () => {
    const { port } = new URL(urls.https);
    const run = spawnSync(
      'openssl',
      ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', join(certs.dir, 'ca.crt'), '-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0'],
      { input: '', encoding: 'utf8', timeout: 10_000 },
    );
    expect(`${run.stdout}${run.stderr}`).toMatch(/alert protocol version/);
  });
});
