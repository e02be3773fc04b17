import { spawnSync } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startEchoUpstream, type EchoUpstream } from '@sample-services/testing/echo-upstream';
import { freePort } from '@sample-services/testing/free-port';
import { makeLocalCertificates, type LocalCertificates } from '@sample-services/testing/local-cert';
import { nginxInstalled, startNginx, type NginxProcess } from '@sample-services/testing/nginx';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

/** What `openssl s_client` printed connecting to `port` with `args`, the authority given to check the chain. */
function handshake(port: number, ca: string, args: string[]): string {
  const run = spawnSync('openssl', ['s_client', '-connect', `127.0.0.1:${port}`, '-CAfile', ca, ...args], {
    input: '',
    encoding: 'utf8',
    timeout: 10_000,
  });
  return `${run.stdout}${run.stderr}`;
}

/**
 * The client offers the old protocol or weak suite (SECLEVEL=0 lets OpenSSL 3 offer them): the server must be
 * the one that refuses, with a TLS alert, not the client failing to offer it ("no protocols available").
 */
const refused = [
  ['TLS 1.0', ['-tls1', '-cipher', 'DEFAULT:@SECLEVEL=0'], /alert protocol version/],
  ['TLS 1.1', ['-tls1_1', '-cipher', 'DEFAULT:@SECLEVEL=0'], /alert protocol version/],
  ['TLS 1.2 with a CBC suite and a SHA-1 MAC', ['-tls1_2', '-cipher', 'ECDHE-ECDSA-AES128-SHA'], /alert handshake failure/],
  ['TLS 1.2 with no encryption (NULL)', ['-tls1_2', '-cipher', 'ECDHE-ECDSA-NULL-SHA:@SECLEVEL=0'], /alert handshake failure/],
] as const;

function refusalChecks(name: string, port: () => number, ca: () => string): void {
  it.each(refused)(`${name} refuses %s with an alert`, (_case, args, alert) => {
    const output = handshake(port(), ca(), [...args]);
    expect(output).toMatch(/Cipher is \(NONE\)/);
    expect(output).toMatch(alert);
  });

  it(`${name} takes TLS 1.2 with an AEAD suite, TLS 1.3, and offers h2 by ALPN, the chain verified`, () => {
    const tls12 = handshake(port(), ca(), ['-tls1_2']);
    expect(tls12).toMatch(/New, TLSv1\.2, Cipher is ECDHE-ECDSA-(AES128-GCM-SHA256|AES256-GCM-SHA384|CHACHA20-POLY1305)$/m);
    expect(tls12).toMatch(/Verify return code: 0 \(ok\)/);
    const tls13 = handshake(port(), ca(), ['-tls1_3', '-alpn', 'h2,http/1.1']);
    expect(tls13).toMatch(/ALPN protocol: h2/);
    expect(tls13).toMatch(/Verify return code: 0 \(ok\)/);
  });
}

describe('TLS versions and suites with openssl s_client', () => {
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

  describe('the TypeScript proxy', () => {
    let proxy: ServiceProcess;
    let tlsPort: number;
    beforeAll(async () => {
      tlsPort = await freePort();
      proxy = await startService('proxy', {
        UPSTREAM_URL: upstream.url,
        TLS_CERT_FILE: certs.certFile,
        TLS_KEY_FILE: certs.keyFile,
        TLS_PORT: String(tlsPort),
      });
    });
    afterAll(async () => {
      await proxy?.stop();
    });
    refusalChecks(
      'the TypeScript proxy',
      () => tlsPort,
      () => `${certs.dir}/ca.crt`,
    );
  });

  // nginx is optional on a workstation, never in CI: there its absence is a failure.
  const available = nginxInstalled();
  if (!available && process.env.CI !== 'true') console.warn('SKIPPED: nginx is not installed; deploy/nginx/https.conf was not checked.');
  (available || process.env.CI === 'true' ? describe : describe.skip)('nginx with deploy/nginx/https.conf', () => {
    let nginx: NginxProcess;
    beforeAll(async () => {
      expect(available, 'nginx must be installed when CI=true').toBe(true);
      nginx = await startNginx({ upstreamPort: upstream.port, https: { certFile: certs.certFile, keyFile: certs.keyFile } });
    });
    afterAll(async () => {
      await nginx?.stop();
    });
    refusalChecks(
      'nginx',
      () => Number(new URL(nginx.httpsUrl ?? '').port),
      () => `${certs.dir}/ca.crt`,
    );
  });
});
