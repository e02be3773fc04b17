import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyContract } from '@sample-services/testing/contract/proxy';
import { httpsRedirectContract } from '@sample-services/testing/contract/https-redirect';
import { proxyH2Contract } from '@sample-services/testing/contract/proxy-h2';
import { startEchoUpstream, type EchoUpstream } from '@sample-services/testing/echo-upstream';
import { send, sendH2, type Trust } from '@sample-services/testing/http-request';
import { makeLocalCertificates, type LocalCertificates } from '@sample-services/testing/local-cert';
import { nginxInstalled, startNginx, type NginxProcess } from '@sample-services/testing/nginx';

// nginx is optional on a workstation, never in CI: there its absence is a failure.
const available = nginxInstalled();
if (!available && process.env.CI !== 'true') {
  console.warn('SKIPPED: nginx is not installed (apt-get install nginx-light); deploy/nginx/https.conf was not tested.');
}
const suite = available || process.env.CI === 'true' ? describe : describe.skip;

suite('nginx with deploy/nginx/https.conf, in front of the echo upstream', () => {
  let certs: LocalCertificates;
  // The contracts read the authority when each test runs, after beforeAll has made it.
  const trust: Trust = {
    get ca() {
      return certs.ca;
    },
  };
  let upstream: EchoUpstream;
  let nginx: NginxProcess;
  const httpsUrl = (): string => nginx.httpsUrl ?? '';
  beforeAll(async () => {
    expect(available, 'nginx must be installed when CI=true').toBe(true);
    certs = await makeLocalCertificates();
    upstream = await startEchoUpstream();
    nginx = await startNginx({
      upstreamPort: upstream.port,
      upstreamTimeout: '2s',
      https: { certFile: certs.certFile, keyFile: certs.keyFile },
    });
  });
  afterAll(async () => {
    await nginx?.stop();
    await upstream?.close();
    await certs?.remove();
  });

  describe('over HTTPS with HTTP/1.1', () => {
    proxyContract({
      baseUrl: httpsUrl,
      upstream: () => upstream,
      upstreamKeepAlive: false,
      trust,
    });
  });

  describe('over HTTPS with HTTP/2', () => {
    proxyH2Contract({ baseUrl: httpsUrl, upstream: () => upstream, trust });
  });

  describe('its plain port beside HTTPS', () => {
    httpsRedirectContract({ plainUrl: () => nginx.baseUrl, httpsUrl, trust });
  });
});

suite('nginx with deploy/nginx/https.conf and HSTS_MAX_AGE', () => {
  let certs: LocalCertificates;
  let upstream: EchoUpstream;
  let nginx: NginxProcess;
  beforeAll(async () => {
    expect(available, 'nginx must be installed when CI=true').toBe(true);
    certs = await makeLocalCertificates();
    upstream = await startEchoUpstream();
    nginx = await startNginx({
      upstreamPort: upstream.port,
      https: { certFile: certs.certFile, keyFile: certs.keyFile, hstsMaxAge: 31536000 },
    });
  });
  afterAll(async () => {
    await nginx?.stop();
    await upstream?.close();
    await certs?.remove();
  });

  it('sends Strict-Transport-Security on forwarded answers and its own errors over HTTPS, never over HTTP', async () => {
    const trust = { ca: certs.ca };
    const httpsUrl = nginx.httpsUrl ?? '';
    const answers = [
      await send(httpsUrl, { path: '/s?status=404&cookies=2' }, trust),
      await sendH2(httpsUrl, { path: '/x?reset' }, trust),
      await send(httpsUrl, { path: '/%zz' }, trust),
    ];
    expect(answers.map((res) => [res.status, res.headers['strict-transport-security']])).toEqual([
      [404, 'max-age=31536000'],
      [502, 'max-age=31536000'],
      [400, 'max-age=31536000'],
    ]);
    expect(answers[0]?.headers['set-cookie']).toEqual(['c1=v1; Path=/', 'c2=v2; Path=/']);
    expect((await send(nginx.baseUrl, { path: '/health' })).headers['strict-transport-security']).toBeUndefined();
  });
});
