import { createServer, type Server } from 'node:http';
import { connect, type AddressInfo } from 'node:net';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxyApp } from '../src/app.js';

/** An upstream that answers each request a little later, noting the order of arrival and the most in flight at once. */
function recordingUpstream(): { server: Server; arrived: string[]; mostInFlight: () => number } {
  const arrived: string[] = [];
  let inFlight = 0;
  let most = 0;
  const server = createServer((request, response) => {
    arrived.push(`${request.method} ${request.url}`);
    most = Math.max(most, ++inFlight);
    request.resume();
    request.on('end', () =>
      setTimeout(() => {
        inFlight -= 1;
        response.end('ok');
      }, 2),
    );
  });
  return { server, arrived, mostInFlight: () => most };
}

/** Writes every request at once on one connection; resolves with the status of each answer, in order. */
function pipeline(port: number, requests: string[]): Promise<string[]> {
  return new Promise((resolve, reject) => {
    const socket = connect(port, '127.0.0.1', () => socket.write(requests.join('')));
    let received = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      received += chunk;
      const statuses = [...received.matchAll(/HTTP\/1\.1 (\d{3}) /g)].map((match) => match[1] as string);
      if (statuses.length < requests.length) return;
      socket.destroy();
      resolve(statuses);
    });
    socket.on('error', reject);
  });
}

describe('a client pipelining requests on one connection', () => {
  const upstream = recordingUpstream();
  let proxy: FastifyInstance;
  let port: number;
  beforeAll(async () => {
    await new Promise<void>((resolve) => upstream.server.listen(0, '127.0.0.1', resolve));
    const upstreamUrl = new URL(`http://127.0.0.1:${(upstream.server.address() as AddressInfo).port}`);
    proxy = createProxyApp({ logger: false, upstream: upstreamUrl, maxConnections: 64, upstreamTimeoutMs: 5_000 });
    await proxy.listen({ port: 0, host: '127.0.0.1' });
    port = (proxy.server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    await proxy?.close();
    upstream.server.close();
  });

  it('has its requests forwarded one after the other, unsafe ones in the order sent, and gets every answer in order', async () => {
    const methods = ['POST', 'GET', 'DELETE', 'PUT', 'GET', 'PATCH'];
    const sent = Array.from({ length: 300 }, (_, i) => `${methods[i % methods.length]} /r/${i}`);
    const requests = sent.map((line) => {
      const body = line.startsWith('GET') || line.startsWith('DELETE') ? '' : 'body';
      return `${line} HTTP/1.1\r\nHost: pipelined.test\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
    });
    const statuses = await pipeline(port, requests);
    expect(statuses).toEqual(sent.map(() => '200'));
    expect(upstream.mostInFlight()).toBeLessThanOrEqual(2);
    const unsafe = (line: string): boolean => !line.startsWith('GET');
    expect(upstream.arrived.filter(unsafe)).toEqual(sent.filter(unsafe));
  });
});
