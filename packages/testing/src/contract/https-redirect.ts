import { expect, it } from 'vitest';
import type { EchoedRequest } from '../echo-upstream.js';
import { send, sendH2, type Trust } from '../http-request.js';

export interface HttpsRedirectContractOptions {
  /** The plain port beside HTTPS. */
  plainUrl: () => string;
  httpsUrl: () => string;
  /** The authority the HTTPS port's certificate chains to (read when a test runs: a getter may supply it). */
  trust: Trust;
}

/**
 * The plain port of a proxy serving HTTPS beside it, nginx with https.conf and the TypeScript proxy alike:
 * 308 to the same host and path over HTTPS, the health paths forwarded as before, no HSTS unless asked for.
 */
export function httpsRedirectContract({ plainUrl, httpsUrl, trust }: HttpsRedirectContractOptions): void {
  it('answers 308 to the same host and path on HTTPS on its plain port, the method kept by the client', async () => {
    const { port } = new URL(httpsUrl());
    for (const method of ['GET', 'POST']) {
      const res = await send(plainUrl(), { method, path: '/users?page=2', headers: { host: 'Shop.Example:8080' } });
      expect([res.status, res.headers.location]).toEqual([308, `https://shop.example:${port}/users?page=2`]);
    }
  });

  it('forwards the health paths on its plain port, as http, so that probes keep working', async () => {
    for (const path of ['/health', '/ready?verbose']) {
      const res = await send(plainUrl(), { path });
      expect(res.status).toBe(200);
      const got = res.json() as EchoedRequest;
      expect([got.url, got.headers['x-forwarded-proto']]).toEqual([path, 'http']);
    }
  });

  it('sends no Strict-Transport-Security unless HSTS_MAX_AGE is set', async () => {
    expect((await sendH2(httpsUrl(), { path: '/' }, trust)).headers['strict-transport-security']).toBeUndefined();
  });
}
