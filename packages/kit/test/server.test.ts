import { afterEach, describe, expect, it } from 'vitest';
import { once } from 'node:events';
import { Agent, request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import type { FastifyInstance } from 'fastify';
import { apiDocs } from '../src/openapi.js';
import { cors } from '../src/cors.js';
import { createServer } from '../src/server.js';
import { HttpError } from '../src/errors.js';
import type { Logger } from '../src/logger.js';

const api = { title: 'test', description: 'kit tests' };
let app: FastifyInstance;

function build(bodyLimit?: number): FastifyInstance {
  app = createServer({ logger: false, api, ...(bodyLimit === undefined ? {} : { bodyLimit }) });
  void app.register(cors).register(apiDocs);
  app.post('/echo', async (request) => ({ received: request.body }));
  app.get('/boom', async () => {
    throw new Error('secret internals: password=hunter2');
  });
  app.get('/unavailable', async () => {
    throw new HttpError(503, 'Database unavailable');
  });
  app.get('/items/:id', { schema: { params: { type: 'object', properties: { id: { type: 'integer' } } } } }, async () => ({}));
  return app;
}

async function openSocket(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  socket.on('error', () => undefined); // the server closing it is the point
  await once(socket, 'connect');
  return socket.resume();
}

afterEach(async () => {
  await app.close();
});

describe('createServer', () => {
  it('parses JSON bodies', async () => {
    const res = await build().inject({ method: 'POST', url: '/echo', payload: { a: 1 } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ received: { a: 1 } });
  });

  it('answers malformed JSON with 400', async () => {
    const res = await build().inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '{"a":' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Request body is not valid JSON' });
  });

  it('answers an empty JSON body with 400', async () => {
    const res = await build().inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: '' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Request body is empty but content-type is application/json' });
  });

  it('answers a body over the limit (1 MiB by default) with 413', async () => {
    const big = JSON.stringify({ pad: 'x'.repeat(1024 * 1024) });
    const res = await build().inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: big });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toEqual({ error: 'Request body is too large' });
    const fits = JSON.stringify({ pad: 'x'.repeat(1024 * 1024 - 20) });
    expect(Buffer.byteLength(fits)).toBeLessThanOrEqual(1024 * 1024);
    expect(
      (await app.inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'application/json' }, payload: fits })).statusCode,
    ).toBe(200);
  });

  it('reads a too-large body of a declared length to its end after its 413, keeping the connection for the next request', async () => {
    build();
    const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
    let connections = 0;
    app.server.on('connection', () => connections++);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const big = Buffer.alloc(4 * 1024 * 1024, 'a');
    const answer = (method: string, body?: Buffer): Promise<[number, string | undefined, string]> =>
      new Promise((resolve, reject) => {
        const req = request(`${baseUrl}/echo`, { method, agent, headers: { 'content-type': 'application/json' } }, (res) => {
          let text = '';
          res.on('data', (chunk: Buffer) => (text += chunk.toString()));
          res.on('end', () => resolve([res.statusCode ?? 0, res.headers.connection, text]));
        });
        req.on('error', reject);
        req.end(body);
      });
    try {
      const [status, connection, text] = await answer('POST', big);
      expect([status, text]).toEqual([413, '{"error":"Request body is too large"}']);
      expect(connection).not.toBe('close');
      expect((await answer('POST', Buffer.from('{"a":1}')))[0]).toBe(200);
      expect(connections).toBe(1);
    } finally {
      agent.destroy();
    }
  });

  it('answers a non-JSON content type with 415', async () => {
    const res = await build().inject({ method: 'POST', url: '/echo', headers: { 'content-type': 'text/plain' }, payload: 'hello' });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual({ error: 'Unsupported content type: send application/json' });
  });

  it('hides the message of an unexpected error behind a generic 500', async () => {
    const res = await build().inject({ method: 'GET', url: '/boom' });
    expect(res.statusCode).toBe(500);
    expect(res.body).toBe('{"error":"Internal server error"}');
  });

  it('shows the message of an HttpError, also for 5xx; a 503 says when to ask again', async () => {
    const res = await build().inject({ method: 'GET', url: '/unavailable' });
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('1');
    expect(res.json()).toEqual({ error: 'Database unavailable' });
  });

  it('answers schema violations with 400 naming the field', async () => {
    const res = await build().inject({ method: 'GET', url: '/items/abc' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Invalid request: params/id must be integer' });
  });

  it('answers 405 JSON with Allow on a parametric path, OPTIONS included (the preflight), and 404 elsewhere', async () => {
    const wrongMethod = await build().inject({ method: 'PUT', url: '/items/7?x=1' });
    expect([wrongMethod.statusCode, wrongMethod.json()]).toEqual([405, { error: 'Method PUT is not allowed on /items/7' }]);
    expect(wrongMethod.headers.allow).toBe('GET, HEAD, OPTIONS');
    const postOnly = await app.inject({ method: 'GET', url: '/echo' });
    expect([postOnly.statusCode, postOnly.headers.allow]).toEqual([405, 'OPTIONS, POST']);
    const unknown = await app.inject({ method: 'GET', url: '/nothing?x=1' });
    expect([unknown.statusCode, unknown.headers.allow, unknown.json()]).toEqual([404, undefined, { error: 'Not found: GET /nothing' }]);
  });

  it('answers a QUERY without a Content-Type as any method a path does not take: 405 with Allow, or 404', async () => {
    const known = await build().inject({ method: 'QUERY', url: '/items/7' });
    expect([known.statusCode, known.headers.allow, known.json()]).toEqual([
      405,
      'GET, HEAD, OPTIONS',
      { error: 'Method QUERY is not allowed on /items/7' },
    ]);
    const unknown = await app.inject({ method: 'QUERY', url: '/nothing' });
    expect([unknown.statusCode, unknown.json()]).toEqual([404, { error: 'Not found: QUERY /nothing' }]);
  });

  it('serves the /docs page (@fastify/swagger-ui) from local files, under a content security policy, errors as JSON', async () => {
    build();
    const page = await app.inject({ url: '/docs' });
    expect([page.statusCode, page.headers['content-type']]).toEqual([200, 'text/html; charset=utf-8']);
    expect(page.headers['content-security-policy']).toMatch(/^default-src 'self'/);
    expect(page.body).toContain('src="/docs/static/swagger-ui-bundle.js"');
    const css = await app.inject({ url: '/docs/static/swagger-ui.css' });
    expect([css.statusCode, css.headers['content-type']]).toEqual([200, 'text/css; charset=utf-8']);
    const missing = await app.inject({ url: '/docs/static/nope.css' });
    expect([missing.statusCode, missing.json()]).toEqual([404, { error: 'Not found: GET /docs/static/nope.css' }]);
  });

  it('answers a malformed URL with 400 JSON', async () => {
    const res = await build().inject({ method: 'GET', url: '/items/%E0%A4%A' });
    expect(res.statusCode).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toHaveProperty('error');
  });

  // inject() writes through light-my-request's own response class, not the server's, so
  // the CORS header (added where the server writes a response head) is checked over a socket.
  async function listen(): Promise<string> {
    return app.listen({ port: 0, host: '127.0.0.1' });
  }

  it('answers a preflight with 204, the methods the services take and the headers asked for', async () => {
    build();
    const res = await fetch(`${await listen()}/echo?x=1`, {
      method: 'OPTIONS',
      headers: {
        origin: 'https://example.org',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'content-type, x-trace',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toBe('GET, HEAD, POST, PUT, PATCH, DELETE');
    expect(res.headers.get('access-control-allow-headers')).toBe('content-type, x-trace');
    expect(res.headers.get('vary')).toBe('Access-Control-Request-Headers');
    expect(res.headers.get('content-length')).toBe('0');
    expect(await res.text()).toBe('');
  });

  it('answers an OPTIONS without the preflight headers with the same 204, not a text/plain 400', async () => {
    const res = await build().inject({ method: 'OPTIONS', url: '/nowhere' });
    expect([res.statusCode, res.body]).toEqual([204, '']);
  });

  it('allows every origin on every answer, errors included', async () => {
    build();
    const baseUrl = await listen();
    for (const [method, path] of [
      ['POST', '/echo'],
      ['GET', '/boom'],
      ['GET', '/unavailable'],
      ['DELETE', '/echo'],
      ['GET', '/nowhere'],
      ['OPTIONS', '/nowhere'],
    ] as const) {
      const res = await fetch(baseUrl + path, {
        method,
        headers: { origin: 'https://example.org', 'content-type': 'application/json' },
        body: method === 'POST' ? '{"a":1}' : undefined,
      });
      expect(res.headers.get('access-control-allow-origin'), `${method} ${path}`).toBe('*');
    }
  });

  it('has no CORS without the cors plugin, as a transparent proxy composes it: OPTIONS is then a wrong method', async () => {
    app = createServer({ logger: false, api });
    app.get('/x', (_request, reply) => {
      void reply.send({ ok: true });
    });
    const baseUrl = await listen();
    expect((await fetch(`${baseUrl}/x`)).headers.get('access-control-allow-origin')).toBeNull();
    const options = await fetch(`${baseUrl}/x`, { method: 'OPTIONS', headers: { 'access-control-request-method': 'GET' } });
    expect([options.status, options.headers.get('allow')]).toEqual([405, 'GET, HEAD']);
    expect(options.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('bounds how long a client may take with its headers and its request', () => {
    build();
    expect(app.server.headersTimeout).toBe(10_000);
    expect(app.server.requestTimeout).toBe(30_000);
    expect(app.server.keepAliveTimeout).toBe(72_000);
  });

  it('answers 408 to a head unfinished after headersTimeout within a second of it, not up to 30 s later', async () => {
    build();
    app.server.headersTimeout = 300;
    const { port } = new URL(await listen());
    const halfHead = await openSocket(Number(port));
    let answer = '';
    halfHead.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    halfHead.write('GET /echo HTTP/1.1\r\nHost: x\r\n');
    const sentAt = Date.now();
    await once(halfHead, 'close');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(Date.now() - sentAt).toBeLessThan(2_500);
  });

  it('closes at once beside clients that sent nothing or half a head, letting a request in flight finish', async () => {
    let release = (): void => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    let started = (): void => undefined;
    const handlerStarted = new Promise<void>((resolve) => (started = resolve));
    build().get('/held', async () => {
      started();
      await held;
      return { done: true };
    });
    const baseUrl = await listen();
    const { port } = new URL(baseUrl);
    const quiet = await openSocket(Number(port));
    const halfHead = await openSocket(Number(port));
    halfHead.write('GET /echo HTTP/1.1\r\nHost: x\r\n');
    const inFlight = fetch(`${baseUrl}/held`);
    // In flight means its handler runs: a connection merely accepted has no response yet and is closed as quiet.
    await handlerStarted;
    await expect.poll(() => new Promise((resolve) => app.server.getConnections((_error, count) => resolve(count)))).toBe(3);
    const closed = app.close();
    release();
    expect(await (await inFlight).json()).toEqual({ done: true });
    // Without the kit's own close of quiet connections this waits forever (Node's headers timer stops on close).
    await closed;
    await Promise.all([once(quiet, 'close'), once(halfHead, 'close')]);
  });
});

describe('createServer logging', () => {
  /** A production-like logger whose JSON lines are collected. */
  function memoryLogger(level: string): { logger: Logger; lines: () => Record<string, unknown>[] } {
    const chunks: string[] = [];
    const stream = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk.toString());
        done();
      },
    });
    const logger: Logger = pino({ level }, stream);
    return {
      logger,
      lines: () =>
        chunks
          .join('')
          .split('\n')
          .filter(Boolean)
          .map((line) => JSON.parse(line) as Record<string, unknown>),
    };
  }

  it('logs a failed request once, with method and URL, through the service logger', async () => {
    const { logger, lines } = memoryLogger('info');
    app = createServer({ logger, api });
    app.get('/boom', () => {
      throw new Error('broken');
    });
    app.get('/ok', (_request, reply) => {
      void reply.send({ ok: true });
    });
    await app.inject({ method: 'GET', url: '/ok' });
    await app.inject({ method: 'GET', url: '/boom?x=1' });
    const logged = lines();
    expect(logged).toHaveLength(1);
    expect(logged[0]).toMatchObject({ level: 50, msg: 'request failed', method: 'GET', url: '/boom?x=1', err: { message: 'broken' } });
  });

  it('keeps the bindings of children the services ask for', () => {
    const { logger, lines } = memoryLogger('info');
    app = createServer({ logger, api });
    app.log.child({ component: 'pool' }).warn('slow');
    expect(lines()).toEqual([expect.objectContaining({ component: 'pool', msg: 'slow' })]);
  });

  it('ties the lines of a request together by its id at debug level', async () => {
    const { logger, lines } = memoryLogger('debug');
    app = createServer({ logger, api });
    app.get('/ok', (_request, reply) => {
      void reply.send({ ok: true });
    });
    await app.inject({ method: 'GET', url: '/ok' });
    const requestLines = lines().filter((line) => line.reqId !== undefined);
    expect(requestLines.map((line) => line.msg)).toEqual(['incoming request', 'request completed']);
    expect(new Set(requestLines.map((line) => line.reqId)).size).toBe(1);
  });
});
