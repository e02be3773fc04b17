import { createHash, randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EchoedRequest, EchoUpstream } from '../echo-upstream.js';
import { sendH2, type ReceivedH2, type Sent, type Trust } from '../http-request.js';

const MiB = 1024 * 1024;
const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

export interface ProxyH2ContractOptions {
  /** The proxy's https: base URL. */
  baseUrl: () => string;
  upstream: () => EchoUpstream;
  /** The authority the proxy's certificate chains to (read when a test runs: a getter may supply it). */
  trust: Trust;
}

/**
 * What proxyContract checks that HTTP/2 can carry (no request line, Connection or chunked framing of its
 * own): requests offered h2 by ALPN are forwarded to the HTTP/1.1 upstream with the same headers, and the
 * proxy's errors are the same JSON. Run against the TypeScript proxy and nginx over HTTPS.
 */
export function proxyH2Contract({ baseUrl, upstream, trust }: ProxyH2ContractOptions): void {
  const send = async (sent: Sent): Promise<ReceivedH2> => {
    const res = await sendH2(baseUrl(), sent, trust);
    expect(res.alpnProtocol).toBe('h2');
    return res;
  };
  const echoed = async (sent: Sent): Promise<EchoedRequest> => {
    const res = await send(sent);
    expect(res.status).toBe(200);
    return res.json() as EchoedRequest;
  };
  const expectJsonError = (res: ReceivedH2, status: number, error: string): void => {
    expect([res.status, res.headers['content-type'], res.json()]).toEqual([status, expect.stringMatching(/^application\/json/), { error }]);
  };

  it('over h2: forwards the method, path, query and body, with no pseudo-header as a header', async () => {
    const body = Buffer.from('{"h2":true}');
    const got = await echoed({ method: 'POST', path: '/h2/path?b=2&a=1', headers: { 'content-type': 'application/json' }, body });
    expect([got.method, got.url, got.bodyLength, got.bodySha256]).toEqual(['POST', '/h2/path?b=2&a=1', body.length, sha256(body)]);
    expect(Object.keys(got.headers).filter((name) => name.startsWith(':'))).toEqual([]);
  });

  it('over h2: forwards a body sent without a length, intact', async () => {
    const chunks = Array.from({ length: 4 }, () => randomBytes(20_000));
    const got = await echoed({ method: 'PUT', path: '/h2/upload', body: chunks });
    expect([got.bodyLength, got.bodySha256]).toEqual([80_000, sha256(Buffer.concat(chunks))]);
  });

  it('over h2: sets Host from :authority as nginx $host, and X-Real-IP, X-Forwarded-For, X-Forwarded-Proto', async () => {
    const got = await echoed({
      path: '/',
      headers: { host: 'Shop.Example.org:8443', 'x-forwarded-for': '1.2.3.4', 'x-forwarded-proto': 'http' },
    });
    expect(got.headers).toMatchObject({
      host: 'shop.example.org',
      'x-real-ip': '127.0.0.1',
      'x-forwarded-for': '1.2.3.4, 127.0.0.1',
      'x-forwarded-proto': 'https',
    });
  });

  it('over h2: forwards end-to-end headers and passes the upstream status and every Set-Cookie back', async () => {
    const got = await echoed({ path: '/', headers: { 'x-custom': 'kept' } });
    expect(got.headers['x-custom']).toBe('kept');
    const res = await send({ path: '/c?cookies=3&status=418' });
    expect([res.status, res.headers['set-cookie'], res.headers['x-echo']]).toEqual([
      418,
      ['c1=v1; Path=/', 'c2=v2; Path=/', 'c3=v3; Path=/'],
      'yes',
    ]);
    expect(res.headers['x-request-id']).toEqual(expect.any(String));
  });

  it('over h2: streams a 1 MiB response intact', async () => {
    const res = await send({ path: `/download?download=${MiB}&sized` });
    expect([res.status, res.body.length]).toEqual([200, MiB]);
  });

  it('over h2: answers 413 JSON for a body over 1 MiB, 400 JSON for a path that cannot be decoded', async () => {
    const before = upstream().requests;
    expectJsonError(await send({ method: 'POST', path: '/upload', body: randomBytes(MiB + 1) }), 413, 'Request body is too large');
    const bad = await send({ path: '/%zz' });
    expect([bad.status, bad.json()]).toEqual([400, { error: expect.any(String) }]);
    expect(upstream().requests).toBe(before);
  });

  it('over h2: answers 502 JSON when the upstream closes instead of answering, 504 JSON when it is too slow', async () => {
    expectJsonError(await send({ path: '/x?reset' }), 502, 'Bad gateway: upstream unavailable');
    try {
      expectJsonError(await send({ path: '/slow?hang' }), 504, 'Gateway timeout: upstream did not answer in time');
    } finally {
      upstream().releaseHanging();
    }
  });
}
