import { createHash, randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import { clientTrusting, type Sent, type Trust } from '../http-request.js';
import { proxyErrorContract } from './proxy-errors.js';
import { downloadBody, type EchoedRequest, type EchoUpstream } from '../echo-upstream.js';

const MiB = 1024 * 1024;

export interface ProxyContractOptions {
  baseUrl: () => string;
  upstream: () => EchoUpstream;
  /**
   * Whether the proxy keeps upstream connections alive (default true). nginx 1.22 does not while
   * it re-resolves `web` (a variable in proxy_pass): a connection per request is what that costs.
   */
  upstreamKeepAlive?: boolean;
  /** For an https: base URL: the authority its certificate chains to. */
  trust?: Trust;
}

const sha256 = (data: Buffer): string => createHash('sha256').update(data).digest('hex');

/**
 * Spec 4.4 against any proxy in front of the echo upstream: the TypeScript proxy and nginx
 * with deploy/nginx/nginx.conf both run it. For the 504 check the proxy needs a short
 * upstream timeout: 2 s, long enough that a loaded machine never times out a normal answer.
 */
export function proxyContract({ baseUrl, upstream, upstreamKeepAlive = true, trust }: ProxyContractOptions): void {
  const { send, sendRaw } = clientTrusting(trust);
  async function echoed(base: string, sent: Sent): Promise<EchoedRequest> {
    const res = await send(base, sent);
    expect(res.status).toBe(200);
    return res.json() as EchoedRequest;
  }
  /** The echo of a request written byte for byte; HTTP/1.0, so that the answer is not chunked. */
  async function echoedRaw(base: string, head: string): Promise<EchoedRequest> {
    const answer = await sendRaw(base, head);
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    return JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4)) as EchoedRequest;
  }

  it('forwards the path and the query string exactly', async () => {
    const got = await echoed(baseUrl(), { path: '/some/deep/path?b=2&a=one%20two&a=3' });
    expect(got.url).toBe('/some/deep/path?b=2&a=one%20two&a=3');
  });

  it.each(['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'PROPFIND'])('forwards %s with its body', async (method) => {
    const body = Buffer.from(`{"method":"${method}"}`);
    const got = await echoed(baseUrl(), { method, path: '/m', headers: { 'content-type': 'application/json' }, body });
    expect(got.method).toBe(method);
    expect(got.bodyLength).toBe(body.length);
    expect(got.bodySha256).toBe(sha256(body));
    expect(got.headers['content-type']).toBe('application/json');
  });

  it('passes traceparent and tracestate on unchanged (tracing off)', async () => {
    const trace = { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', tracestate: 'vendor=opaque' };
    const got = await echoed(baseUrl(), { path: '/traced', headers: trace });
    expect(got.headers).toMatchObject(trace);
  });

  it('forwards HEAD and returns the upstream headers without a body', async () => {
    const res = await send(baseUrl(), { method: 'HEAD', path: '/head' });
    expect(res.status).toBe(200);
    expect(res.headers['x-echo']).toBe('yes');
    expect(res.body.length).toBe(0);
  });

  it('forwards a CORS preflight OPTIONS and adds no CORS headers of its own', async () => {
    const res = await send(baseUrl(), {
      method: 'OPTIONS',
      path: '/api/users',
      headers: { origin: 'https://example.org', 'access-control-request-method': 'POST' },
    });
    expect(res.status).toBe(200);
    const got = res.json() as EchoedRequest;
    expect(got.method).toBe('OPTIONS');
    expect(got.headers.origin).toBe('https://example.org');
    expect(got.headers['access-control-request-method']).toBe('POST');
    expect(res.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('sets Host to the original host name, as nginx $host: lower case, without the port', async () => {
    expect((await echoed(baseUrl(), { path: '/' })).headers.host).toBe('127.0.0.1');
    const got = await echoed(baseUrl(), { path: '/', headers: { host: 'Shop.Example.org:8080' } });
    expect(got.headers.host).toBe('shop.example.org');
  });

  it('sends an absolute request target (GET http://host/path) as its path, with Host from its host', async () => {
    const got = await echoedRaw(baseUrl(), 'GET http://Other.Example/abs?q=1 HTTP/1.0\r\nHost: named.example');
    expect(got.url).toBe('/abs?q=1');
    expect(got.headers.host).toBe('other.example');
  });

  it('sets Host to the server name, localhost, when an HTTP/1.0 client sends none', async () => {
    const got = await echoedRaw(baseUrl(), 'GET /old HTTP/1.0');
    expect(got.headers.host).toBe('localhost');
  });

  it('sets X-Real-IP to the client address and X-Forwarded-For to it when there is no chain', async () => {
    const got = await echoed(baseUrl(), { path: '/' });
    expect(got.headers['x-real-ip']).toBe('127.0.0.1');
    expect(got.headers['x-forwarded-for']).toBe('127.0.0.1');
  });

  it('appends the client address to an incoming X-Forwarded-For chain and replaces a forged X-Real-IP', async () => {
    const one = await echoed(baseUrl(), { path: '/', headers: { 'x-forwarded-for': '1.2.3.4', 'x-real-ip': '9.9.9.9' } });
    expect(one.headers['x-forwarded-for']).toBe('1.2.3.4, 127.0.0.1');
    expect(one.headers['x-real-ip']).toBe('127.0.0.1');
    const two = await echoed(baseUrl(), { path: '/', headers: { 'x-forwarded-for': '1.2.3.4, 5.6.7.8' } });
    expect(two.headers['x-forwarded-for']).toBe('1.2.3.4, 5.6.7.8, 127.0.0.1');
    const repeated = await echoed(baseUrl(), { path: '/', headers: { 'x-forwarded-for': ['1.1.1.1', '2.2.2.2'] } });
    expect(repeated.headers['x-forwarded-for']).toBe('1.1.1.1, 2.2.2.2, 127.0.0.1');
  });

  it('sets X-Forwarded-Proto to the scheme the client used, replacing one the client sent', async () => {
    const got = await echoed(baseUrl(), { path: '/', headers: { 'x-forwarded-proto': 'gopher' } });
    expect(got.headers['x-forwarded-proto']).toBe(new URL(baseUrl()).protocol.slice(0, -1));
  });

  it('forwards end-to-end request headers and drops hop-by-hop ones', async () => {
    const got = await echoed(baseUrl(), { path: '/', headers: { 'x-custom': 'kept', 'keep-alive': 'timeout=5', te: 'trailers' } });
    expect(got.headers['x-custom']).toBe('kept');
    expect(got.headers['keep-alive']).toBeUndefined();
    expect(got.headers.te).toBeUndefined();
  });

  it('drops request headers whose name has an underscore, as nginx (underscores_in_headers off)', async () => {
    const got = await echoedRaw(
      baseUrl(),
      'GET /under HTTP/1.0\r\nHost: under.example\r\nX_Real_IP: 6.6.6.6\r\nX_Custom: no\r\nX-Custom: yes',
    );
    expect(got.headers['x-custom']).toBe('yes');
    expect(Object.keys(got.headers).filter((name) => name.includes('_'))).toEqual([]);
    expect(got.headers['x-real-ip']).toBe('127.0.0.1');
  });

  it.each([404, 418, 500, 502])('passes the upstream status %i and its body through unchanged', async (status) => {
    const res = await send(baseUrl(), { path: `/s?status=${status}` });
    expect(res.status).toBe(status);
    expect((res.json() as EchoedRequest).url).toBe(`/s?status=${status}`);
  });

  it('passes response headers through, every Set-Cookie included', async () => {
    const res = await send(baseUrl(), { path: '/c?cookies=3' });
    expect(res.headers['set-cookie']).toEqual(['c1=v1; Path=/', 'c2=v2; Path=/', 'c3=v3; Path=/']);
    expect(res.headers['x-echo']).toBe('yes');
    expect(res.headers['content-type']).toBe('application/json');
  });

  it('streams a 1 MiB body to the upstream intact', async () => {
    const body = randomBytes(MiB);
    const got = await echoed(baseUrl(), { method: 'POST', path: '/upload', headers: { 'content-type': 'application/octet-stream' }, body });
    expect(got.bodyLength).toBe(MiB);
    expect(got.bodySha256).toBe(sha256(body));
  });

  it('forwards a chunked upload intact', async () => {
    const chunks = Array.from({ length: 10 }, () => randomBytes(30_000));
    const got = await echoed(baseUrl(), { method: 'PUT', path: '/upload', body: chunks });
    expect(got.bodyLength).toBe(300_000);
    expect(got.bodySha256).toBe(sha256(Buffer.concat(chunks)));
  });

  it('streams a 1 MiB response to the client intact', async () => {
    const res = await send(baseUrl(), { path: `/download?download=${MiB}` });
    expect(res.status).toBe(200);
    expect(res.body.equals(downloadBody(MiB))).toBe(true);
  });

  it('streams a 1 MiB response of declared length intact, with its length', async () => {
    const res = await send(baseUrl(), { path: `/download?download=${MiB}&sized` });
    expect([res.status, res.headers['content-length']]).toEqual([200, String(MiB)]);
    expect(res.body.equals(downloadBody(MiB))).toBe(true);
  });

  it(upstreamKeepAlive ? 'reuses kept-alive upstream connections' : 'opens one upstream connection per request', async () => {
    const before = upstream().connections;
    for (let i = 0; i < 10; i += 1) await echoed(baseUrl(), { path: `/ka/${i}` });
    if (upstreamKeepAlive) expect(upstream().connections - before).toBeLessThanOrEqual(1);
    else expect(upstream().connections - before).toBe(10);
  });

  proxyErrorContract({ baseUrl, upstream, trust });
}
