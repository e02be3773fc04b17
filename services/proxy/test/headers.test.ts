import { describe, expect, it } from 'vitest';
import type { IncomingHttpHeaders } from 'node:http';
import { util } from 'undici';
import { clientResponseHeaders, declaredLength, hostOf, upstreamRequestHeaders } from '../src/headers.js';

/** The flat [name, value, ...] list as name -> values, to compare without caring for order. */
function grouped(flat: string[]): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (let i = 0; i < flat.length; i += 2) (out[flat[i] as string] ??= []).push(flat[i + 1] as string);
  return out;
}

describe('hostOf (nginx $host)', () => {
  it.each([
    ['example.org', 'example.org'],
    ['Example.ORG:8080', 'example.org'],
    ['127.0.0.1:80', '127.0.0.1'],
    ['[::1]:8080', '[::1]'],
    ['[::1]', '[::1]'],
    [undefined, 'localhost'],
    ['', 'localhost'],
  ])('%s -> %s', (host, expected) => {
    expect(hostOf(host)).toBe(expected);
  });
});

describe('upstreamRequestHeaders', () => {
  it('keeps end-to-end headers, repeated ones included, and sets the four forwarding headers', () => {
    const headers = grouped(
      upstreamRequestHeaders(
        { host: 'a.example:81', accept: 'application/json', cookie: 'a=1', 'x-list': ['1', '2'] },
        'a.example:81',
        '10.0.0.7',
        'req-1',
      ),
    );
    expect(headers).toEqual({
      accept: ['application/json'],
      cookie: ['a=1'],
      'x-list': ['1', '2'],
      host: ['a.example'],
      'x-real-ip': ['10.0.0.7'],
      'x-forwarded-for': ['10.0.0.7'],
      'x-forwarded-proto': ['http'],
      'x-request-id': ['req-1'],
    });
  });

  it("sets X-Forwarded-Proto to the client's scheme in place of the client's own, and drops HTTP/2's pseudo-headers", () => {
    const headers = grouped(
      upstreamRequestHeaders(
        { ':method': 'GET', ':path': '/p', ':authority': 'a.example', ':scheme': 'https', 'x-forwarded-proto': 'http' },
        'a.example',
        '10.0.0.7',
        'req-3',
        'https',
      ),
    );
    expect(Object.keys(headers).filter((name) => name.startsWith(':'))).toEqual([]);
    expect(headers['x-forwarded-proto']).toEqual(['https']);
  });

  it("sends the request's id as X-Request-Id in place of the client's", () => {
    const headers = grouped(upstreamRequestHeaders({ 'x-request-id': 'not kept' }, undefined, '10.0.0.7', 'req-2'));
    expect(headers['x-request-id']).toEqual(['req-2']);
  });

  it('appends the client to an incoming chain and replaces a client-sent X-Real-IP', () => {
    const headers = grouped(
      upstreamRequestHeaders({ 'x-forwarded-for': '1.2.3.4, 5.6.7.8', 'x-real-ip': '6.6.6.6' }, undefined, '10.0.0.7', 'req-1'),
    );
    expect(headers.host).toEqual(['localhost']);
    expect(headers['x-forwarded-for']).toEqual(['1.2.3.4, 5.6.7.8, 10.0.0.7']);
    expect(headers['x-real-ip']).toEqual(['10.0.0.7']);
  });

  it('drops hop-by-hop headers, Proxy-* ones, Expect and the headers named in Connection', () => {
    const headers = grouped(
      upstreamRequestHeaders(
        {
          connection: 'keep-alive, X-Hop',
          'keep-alive': 'timeout=5',
          'transfer-encoding': 'chunked',
          te: 'trailers',
          trailer: 'x-sum',
          upgrade: 'h2c',
          'proxy-authorization': 'Basic eA==',
          'proxy-connection': 'keep-alive',
          expect: '100-continue',
          'x-hop': 'private',
          'x-kept': 'yes',
        },
        undefined,
        '10.0.0.7',
        'req-1',
      ),
    );
    expect(Object.keys(headers).sort()).toEqual(['host', 'x-forwarded-for', 'x-forwarded-proto', 'x-kept', 'x-real-ip', 'x-request-id']);
  });
});

describe('clientResponseHeaders', () => {
  /** The headers as undici hands them over: read off the wire as Buffers, in order, then parsed into an object. */
  const raw = (...pairs: [string, string][]): IncomingHttpHeaders =>
    util.parseHeaders(pairs.flatMap(([name, value]) => [Buffer.from(name), Buffer.from(value, 'latin1')]));

  it('keeps every end-to-end header, each Set-Cookie included, and drops hop-by-hop ones', () => {
    const headers = clientResponseHeaders(
      raw(
        ['Content-Type', 'application/json'],
        ['set-cookie', 'a=1'],
        ['Connection', 'keep-alive, X-Hop'],
        ['Keep-Alive', 'timeout=72'],
        ['set-cookie', 'b=2'],
        ['Transfer-Encoding', 'chunked'],
        ['x-hop', 'private'],
        ['Proxy-Authenticate', 'Basic'],
        ['content-length', '12'],
        ['x-request-id', 'from-upstream'],
      ),
      'id-1',
    );
    // In the upstream's order, as Node writes a flat list, and the request's own id last, in place of the upstream's.
    expect(headers).toEqual([
      'content-type',
      'application/json',
      'set-cookie',
      'a=1',
      'set-cookie',
      'b=2',
      'content-length',
      '12',
      'x-request-id',
      'id-1',
    ]);
    expect(declaredLength(headers)).toBe(12);
  });

  it('has no declared length without a Content-Length', () => {
    expect(declaredLength(clientResponseHeaders(raw(['transfer-encoding', 'chunked'], ['x-a', '1']), 'id-1'))).toBeNaN();
  });

  it('reads every Connection header for the names it lists, and keeps values byte for byte (latin1)', () => {
    const headers = clientResponseHeaders(
      raw(['connection', 'x-one'], ['x-one', '1'], ['Connection', 'x-two'], ['x-two', '2'], ['x-text', 'caf\u00e9']),
      'id-1',
    );
    expect(headers).toEqual(['x-text', 'caf\u00e9', 'x-request-id', 'id-1']);
  });

  it('treats names of Object properties as plain headers', () => {
    const headers = clientResponseHeaders(raw(['constructor', 'a'], ['constructor', 'b'], ['__proto__', 'c'], ['toString', 'd']), 'id-1');
    expect(headers).toEqual(['constructor', 'a', 'constructor', 'b', '__proto__', 'c', 'tostring', 'd', 'x-request-id', 'id-1']);
  });
});
