import { once } from 'node:events';
import { connect } from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createServer, type App } from '../src/server.js';
import { readyPlugin, type ReadyCheck } from '../src/ready.js';

const api = { title: 'test', description: 'kit tests' };
let app: App;

function build(check?: ReadyCheck): App {
  app = createServer({ logger: false, api });
  void app.register(readyPlugin(check === undefined ? {} : { check }));
  return app;
}

afterEach(async () => {
  await app.close();
});

/** One raw HTTP/1.1 GET on a socket, answered whole: status line and body. */
async function rawGet(port: number, path: string): Promise<{ status: number; body: string }> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  socket.write(`GET ${path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n`);
  const chunks: Buffer[] = [];
  socket.on('data', (chunk: Buffer) => chunks.push(chunk));
  await once(socket, 'close');
  const text = Buffer.concat(chunks).toString();
  return { status: Number(/^HTTP\/1\.1 (\d+)/.exec(text)?.[1]), body: text.slice(text.indexOf('\r\n\r\n') + 4) };
}

describe('readyPlugin: GET /ready', () => {
  it('answers 200 {"status":"ready"} without a check, and when the check passes', async () => {
    for (const check of [undefined, () => true as const, () => Promise.resolve(true as const)]) {
      const res = await build(check).inject({ method: 'GET', url: '/ready' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/^application\/json/);
      expect(res.body).toBe('{"status":"ready"}');
      await app.close();
    }
  });

  it('answers 503 naming what it waits for when the check says so', async () => {
    const res = await build(() => Promise.resolve('the database is unreachable')).inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: 'Not ready: the database is unreachable' });
  });

  it('answers 503 when the check fails, without its message', async () => {
    const res = await build(() => Promise.reject(new Error('secret internals'))).inject({ method: 'GET', url: '/ready' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: 'Not ready: the readiness check failed' });
  });

  it('answers 503 once the server is closing, also to a request whose check began before', async () => {
    let release: (value: true) => void = () => undefined;
    let started: () => void = () => undefined;
    const checkStarted = new Promise<void>((resolve) => (started = resolve));
    build(() => {
      started();
      return new Promise<true>((resolve) => (release = resolve));
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = app.server.address() as AddressInfo;
    const answer = rawGet(port, '/ready');
    await checkStarted;
    const closed = app.close();
    await new Promise((resolve) => setImmediate(resolve)); // close() has begun: its preClose hooks ran
    release(true);
    const { status, body } = await answer;
    expect(status).toBe(503);
    expect(JSON.parse(body)).toEqual({ error: 'Not ready: shutting down' });
    await closed;
  });

  it('documents 200 and its own 503 in the OpenAPI document', async () => {
    build();
    await app.ready();
    const document = app.swagger() as { paths: Record<string, { get: { responses: Record<string, { description: string }> } }> };
    const responses = document.paths['/ready']?.get.responses ?? {};
    expect(Object.keys(responses)).toEqual(expect.arrayContaining(['200', '503']));
    expect(responses['503']?.description).toMatch(/^Not ready/);
  });
});
