import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { proxyContract } from '@sample-services/testing/contract/proxy';
import { httpsRedirectContract } from '@sample-services/testing/contract/https-redirect';
import { proxyH2Contract } from '@sample-services/testing/contract/proxy-h2';
import { startEchoUpstream, type EchoedRequest, type EchoUpstream } from '@sample-services/testing/echo-upstream';
import { freePort } from '@sample-services/testing/free-port';
import { send, sendH2, type Trust } from '@sample-services/testing/http-request';
import { makeLocalCertificates, type LocalCertificates } from '@sample-services/testing/local-cert';
import { runServiceToExit, startService, type ServiceProcess } from '@sample-services/testing/service-process';

describe('the TypeScript proxy with TLS_CERT_FILE and TLS_KEY_FILE, in front of the echo upstream', () => {
  let certs: LocalCertificates;
  // The contracts read the authority when each test runs, after beforeAll has made it.
  const trust: Trust = {
    get ca() {
      return certs.ca;
    },
  };
  let upstream: EchoUpstream;
  let proxy: ServiceProcess;
  let tlsPort: number;
  const httpsUrl = (): string => `https://127.0.0.1:${tlsPort}`;
  beforeAll(async () => {
    certs = await makeLocalCertificates();
    upstream = await startEchoUpstream();
    tlsPort = await freePort();
    proxy = await startService('proxy', {
      UPSTREAM_URL: upstream.url,
      UPSTREAM_TIMEOUT_MS: '2000',
      TLS_CERT_FILE: certs.certFile,
      TLS_KEY_FILE: certs.keyFile,
      TLS_PORT: String(tlsPort),
    });
  });
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
    await certs?.remove();
  });

  describe('over HTTPS with HTTP/1.1', () => {
    proxyContract({
      baseUrl: httpsUrl,
      upstream: () => upstream,
      trust,
    });
  });

  describe('over HTTPS with HTTP/2', () => {
    proxyH2Contract({ baseUrl: httpsUrl, upstream: () => upstream, trust });
  });

  describe('its plain port beside HTTPS', () => {
    httpsRedirectContract({ plainUrl: () => proxy.baseUrl, httpsUrl, trust });
  });
});

describe('the TypeScript proxy with HSTS_MAX_AGE and METRICS_PORT', () => {
  let certs: LocalCertificates;
  let upstream: EchoUpstream;
  let proxy: ServiceProcess;
  let tlsPort: number;
  let metricsPort: number;
  beforeAll(async () => {
    certs = await makeLocalCertificates();
    upstream = await startEchoUpstream();
    tlsPort = await freePort();
    metricsPort = await freePort();
    proxy = await startService('proxy', {
      METRICS_PORT: String(metricsPort),
      UPSTREAM_URL: upstream.url,
      TLS_CERT_FILE: certs.certFile,
      TLS_KEY_FILE: certs.keyFile,
      TLS_PORT: String(tlsPort),
      HSTS_MAX_AGE: '31536000',
    });
  });
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
    await certs?.remove();
  });

  it('sends Strict-Transport-Security on forwarded answers and its own errors over HTTPS, never over HTTP', async () => {
    const trust = { ca: certs.ca };
    const httpsUrl = `https://127.0.0.1:${tlsPort}`;
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
    expect((await send(proxy.baseUrl, { path: '/health' })).headers['strict-transport-security']).toBeUndefined();
  });

  it("counts both listeners' requests on METRICS_PORT", async () => {
    await sendH2(`https://127.0.0.1:${tlsPort}`, { path: '/s?status=418' }, { ca: certs.ca });
    await send(proxy.baseUrl, { path: '/moved' });
    const text = (await send(`http://127.0.0.1:${metricsPort}`, { path: '/metrics' })).body.toString();
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/\*",status_code="418"\} 1$/m);
    expect(text).toMatch(/^http_requests_total\{method="GET",route="\/\*",status_code="308"\} 1$/m);
  });
});

describe('the TypeScript proxy: TLS configuration errors', () => {
  it.each([
    [{ TLS_CERT_FILE: '/etc/hostname' }, 'TLS_CERT_FILE and TLS_KEY_FILE must be set together, got only TLS_CERT_FILE'],
    [{ TLS_KEY_FILE: '/etc/hostname' }, 'TLS_CERT_FILE and TLS_KEY_FILE must be set together, got only TLS_KEY_FILE'],
    [
      { TLS_CERT_FILE: '/nowhere/tls.crt', TLS_KEY_FILE: '/etc/hostname' },
      'TLS_CERT_FILE must name a readable file, got "/nowhere/tls.crt" (ENOENT)',
    ],
    [
      { TLS_CERT_FILE: '/etc/hostname', TLS_KEY_FILE: '/etc/hostname', TLS_PORT: '8080', PORT: '8080' },
      'TLS_PORT must differ from PORT (8080) and METRICS_PORT, got "8080"',
    ],
    [
      { TLS_CERT_FILE: '/etc/hostname', TLS_KEY_FILE: '/etc/hostname', HSTS_MAX_AGE: 'yes' },
      'HSTS_MAX_AGE must be an integer from 0 to 63072000, got "yes"',
    ],
  ])('%o stops the process with exit 1 and one line', async (env, message) => {
    const { code, output } = await runServiceToExit('proxy', { PORT: '0', ...env });
    expect([code, output]).toEqual([1, `proxy: invalid configuration: ${message}\n`]);
  });
});

describe('the TypeScript proxy with TLS: shutdown', () => {
  let certs: LocalCertificates;
  let upstream: EchoUpstream;
  beforeAll(async () => {
    certs = await makeLocalCertificates();
    upstream = await startEchoUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
    await certs?.remove();
  });

  it('lets requests in flight over h2 and over HTTPS with HTTP/1.1 finish on SIGTERM, then exits 0', async () => {
    const tlsPort = await freePort();
    const env = { UPSTREAM_URL: upstream.url, TLS_CERT_FILE: certs.certFile, TLS_KEY_FILE: certs.keyFile, TLS_PORT: String(tlsPort) };
    const proxy = await startService('proxy', env);
    const httpsUrl = `https://127.0.0.1:${tlsPort}`;
    const held = [];
    for (const request of [
      () => sendH2(httpsUrl, { path: '/h2?hang' }, { ca: certs.ca }),
      () => send(httpsUrl, { path: '/h1?hang' }, { ca: certs.ca }),
    ]) {
      const arrived = upstream.nextHanging();
      held.push(request());
      await arrived;
    }
    const exited = proxy.stop('SIGTERM');
    await expect.poll(() => proxy.lines.some((l) => l.includes('shutting down')), { timeout: 5_000 }).toBe(true);
    upstream.releaseHanging();
    const answers = await Promise.all(held);
    expect(answers.map((res) => [res.status, (res.json() as EchoedRequest).url])).toEqual([
      [200, '/h2?hang'],
      [200, '/h1?hang'],
    ]);
    expect(await exited).toBe(0);
  });
});
