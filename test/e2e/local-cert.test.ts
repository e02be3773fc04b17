import { createSecureServer } from 'node:http2';
import { once } from 'node:events';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { send, sendH2, sendRaw } from '@sample-services/testing/http-request';
import { makeLocalCertificates, runLocalCert, type LocalCertificates } from '@sample-services/testing/local-cert';

describe('scripts/local-cert.sh and the TLS test clients', () => {
  let certs: LocalCertificates;
  let baseUrl: string;
  let close: () => Promise<void>;
  beforeAll(async () => {
    certs = await makeLocalCertificates();
    // A server that answers its protocol and Host or :authority, over h2 or HTTP/1.1 by ALPN.
    const server = createSecureServer(
      { cert: await readFile(certs.certFile), key: await readFile(certs.keyFile), allowHTTP1: true },
      (request, response) => {
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ version: request.httpVersion, authority: request.authority, path: request.url }));
      },
    );
    await once(server.listen(0, '127.0.0.1'), 'listening');
    baseUrl = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => new Promise((resolve) => server.close(() => resolve()));
  });
  afterAll(async () => {
    await close?.();
    await certs?.remove();
  });

  it('prints how to trust the authority, and keeps the authority key private', async () => {
    expect(certs.output).toContain(`update-ca-certificates`);
    expect(certs.output).toContain(`certutil -d sql:$HOME/.pki/nssdb -A -t C,, -n sample-services-local -i ${join(certs.dir, 'ca.crt')}`);
    expect((await stat(join(certs.dir, 'ca.key'))).mode & 0o777).toBe(0o600);
  });

  it('keeps the authority and the certificate when run again', async () => {
    const before = await readFile(certs.certFile);
    expect(await runLocalCert(certs.dir, { LOCAL_CERT_TOOL: 'openssl' })).toMatch(/^kept: /);
    expect((await readFile(certs.certFile)).equals(before)).toBe(true);
  });

  it('makes a certificate that 127.0.0.1 and localhost are verified against, over HTTP/1.1 and h2', async () => {
    const http1 = await send(baseUrl, { path: '/one' }, { ca: certs.ca });
    expect(http1.json()).toEqual({ version: '1.1', path: '/one' });
    const localhost = baseUrl.replace('127.0.0.1', 'localhost');
    const h2 = await sendH2(localhost, { path: '/two', headers: { host: 'named.example' } }, { ca: certs.ca });
    expect([h2.alpnProtocol, h2.status, h2.json()]).toEqual(['h2', 200, { version: '2.0', authority: 'named.example', path: '/two' }]);
    const raw = await sendRaw(baseUrl, 'GET /three HTTP/1.1\r\nHost: x', '', { ca: certs.ca });
    expect(raw).toMatch(/^HTTP\/1\.1 200 [^]*"path":"\/three"/);
  });

  it('is refused by a client that trusts only the usual authorities', async () => {
    await expect(send(baseUrl, { path: '/' })).rejects.toThrow(/unable to verify the first certificate/);
  });
});
