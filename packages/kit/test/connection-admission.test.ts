import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { admitConnections, type Admission } from '../src/connection-admission.js';

let server: Server;
let admission: Admission;
let dropped = 0;
const clients: Socket[] = [];

/** A plain Node HTTP server answering `path` in JSON, capped at `serving` with `waiting` places. */
async function start(serving: number, waiting: number): Promise<number> {
  server = createServer((request, response) => {
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ path: request.url }));
  });
  dropped = 0;
  admission = admitConnections(server, { serving, waiting, onDrop: () => (dropped += 1) });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as { port: number }).port;
}

/** A raw client: connected, its text so far, and a way to send a GET. */
async function client(port: number): Promise<{ socket: Socket; text: () => string; get: (path: string) => void }> {
  const socket = connect(port, '127.0.0.1');
  clients.push(socket);
  let text = '';
  socket.on('data', (chunk: Buffer) => (text += chunk.toString()));
  socket.on('error', () => undefined);
  await once(socket, 'connect');
  return { socket, text: () => text, get: (path) => socket.write(`GET ${path} HTTP/1.1\r\nHost: x\r\n\r\n`) };
}

afterEach(async () => {
  for (const socket of clients.splice(0)) socket.destroy();
  admission.closeWaiting();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('admitConnections', () => {
  it('serves up to the cap; a connection beyond it waits, its request answered once a served one closes', async () => {
    const port = await start(1, 4);
    // Served as it arrives, and no request yet: it keeps its place (headersTimeout's business).
    const first = await client(port);
    await expect.poll(() => admission.counts().serving).toBe(1);
    const second = await client(port);
    second.get('/second');
    await expect.poll(() => admission.counts()).toEqual({ serving: 1, waiting: 1, long: 0 });
    await new Promise((resolve) => setTimeout(resolve, 600));
    expect(second.text()).toBe('');
    first.socket.destroy();
    await expect.poll(second.text).toContain('{"path":"/second"}');
    expect(admission.counts()).toEqual({ serving: 1, waiting: 0, long: 0 });
  });

  it('serves a waiting probe (GET /health, GET /ready?x) at once, past the cap, and closes its connection after the answer', async () => {
    const port = await start(1, 4);
    const busy = await client(port);
    busy.get('/busy');
    await expect.poll(busy.text).toContain('/busy');
    for (const path of ['/health', '/ready?full=1']) {
      const probe = await client(port);
      probe.get(path);
      await expect.poll(probe.text).toContain(`{"path":"${path}"}`);
      // No other request can follow a probe in past the cap on its connection.
      await expect.poll(() => probe.socket.readableEnded).toBe(true);
      expect(probe.text()).toMatch(/\r\nConnection: close\r\n/i);
    }
    const other = await client(port);
    other.get('/healthy');
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(other.text()).toBe('');
  });

  it('serves a probe of the probe listener at once, past the cap, and answers anything else there 404 JSON', async () => {
    const port = await start(1, 4);
    const busy = await client(port);
    busy.get('/busy');
    await expect.poll(busy.text).toContain('/busy');
    const probes = createNetServer((socket) => admission.probeOnly(socket));
    probes.listen(0, '127.0.0.1');
    await once(probes, 'listening');
    try {
      const probePort = (probes.address() as { port: number }).port;
      const probe = await client(probePort);
      probe.get('/ready');
      await expect.poll(probe.text).toContain('{"path":"/ready"}');
      const other = await client(probePort);
      other.get('/busy');
      await once(other.socket, 'end');
      expect(other.text()).toMatch(
        /^HTTP\/1\.1 404 Not Found\r\n[^]*\r\n\r\n\{"error":"Only GET \/health and GET \/ready are served here"\}$/,
      );
    } finally {
      probes.close();
    }
  });

  it('closes a connection unanswered once every waiting place is taken, and says so', async () => {
    const port = await start(1, 1);
    await client(port);
    await client(port);
    await expect.poll(() => admission.counts()).toEqual({ serving: 1, waiting: 1, long: 0 });
    const third = await client(port);
    await once(third.socket, 'close');
    expect(dropped).toBe(1);
  });

  it('forgets a waiting client that goes away, and closes the waiting ones when asked', async () => {
    const port = await start(1, 4);
    await client(port);
    const gone = await client(port);
    const kept = await client(port);
    await expect.poll(() => admission.counts().waiting).toBe(2);
    gone.socket.destroy();
    await expect.poll(() => admission.counts().waiting).toBe(1);
    admission.closeWaiting();
    await once(kept.socket, 'close');
    expect(admission.counts().waiting).toBe(0);
  });
});

describe('admitConnections, waits and turns', () => {
  it('answers a GET that waited too long 503 JSON with Retry-After, and keeps its connection waiting with the next request', async () => {
    server = createServer((request, response) => response.end(JSON.stringify({ path: request.url })));
    admission = admitConnections(server, { serving: 1, waiting: 4, maxWaitMs: 300 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const first = await client(port);
    const late = await client(port);
    // Two requests at once: the first waits its time and is answered 503, the second then waits in its turn.
    late.socket.write('GET /late HTTP/1.1\r\nHost: x\r\n\r\nGET /next HTTP/1.1\r\nHost: x\r\n\r\n');
    await expect.poll(late.text).toContain('\r\n\r\n{"error":"Too many connections: try again shortly"}');
    first.socket.destroy();
    await expect.poll(late.text).toContain('{"path":"/next"}');
    expect(late.text()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n[^]*\r\nRetry-After: 1\r\n[^]*\r\nConnection: keep-alive\r\n/);
    expect(late.text().match(/HTTP\/1\.1 /g)).toHaveLength(2);
  });

  it('answers a request with a body that waited too long 503 JSON with Retry-After, and lets the client close first', async () => {
    server = createServer((_request, response) => response.end('{}'));
    admission = admitConnections(server, { serving: 1, waiting: 4, maxWaitMs: 100 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    await client(port);
    const late = await client(port);
    late.socket.write('POST /late HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
    await expect.poll(late.text).toContain('\r\n\r\n{"error":"Too many connections: try again shortly"}');
    expect(late.text()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(late.text()).toMatch(/\r\nRetry-After: 1\r\n/);
    expect(late.text()).toMatch(/\r\nConnection: close\r\n/);
    expect(admission.counts()).toEqual({ serving: 1, waiting: 0, long: 0 });
    // The answer asked the client to close: the server's side ends with it.
    late.socket.end();
    await once(late.socket, 'close');
  });

  it('while others wait, ends a connection served longer than turnAfterMs after its answer', async () => {
    server = createServer((request, response) => response.end(JSON.stringify({ path: request.url })));
    // Sweeps 5 s apart: the idle rule (next test) closes nothing between these requests.
    admission = admitConnections(server, { serving: 1, waiting: 4, turnAfterMs: 100, longAfterMs: 10_000 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const port = (server.address() as { port: number }).port;
    const first = await client(port);
    first.get('/one');
    await expect.poll(first.text).toContain('/one');
    expect(first.text()).toMatch(/\r\nConnection: keep-alive\r\n/i);
    const second = await client(port);
    second.get('/second');
    await expect.poll(() => admission.counts().waiting).toBe(1);
    // Served for less than turnAfterMs: kept alive even though one waits.
    first.get('/two');
    await expect.poll(first.text).toContain('/two');
    expect(first.text().split('\r\nConnection: keep-alive\r\n')).toHaveLength(3);
    await new Promise((resolve) => setTimeout(resolve, 120));
    first.get('/three');
    await expect.poll(first.text).toContain('/three');
    expect(first.text()).toMatch(/\r\nConnection: close\r\n/i);
    await expect.poll(second.text).toContain('/second');
  });
});

describe('admitConnections, places for connections at work', () => {
  /** Responses to GET /long: their head and a first chunk written, ended by the test. */
  const longResponses: ServerResponse[] = [];
  /** Responses to GET /pending: nothing written yet (a handler at work), ended by the test. */
  const pendingResponses: ServerResponse[] = [];

  async function startWithLong(options: { long?: number; longAfterMs?: number; idleAfterMs?: number }): Promise<number> {
    longResponses.length = 0;
    pendingResponses.length = 0;
    server = createServer((request, response) => {
      if (request.url === '/pending') return void pendingResponses.push(response);
      if (request.url !== '/long') return response.end(JSON.stringify({ path: request.url }));
      response.write('[');
      longResponses.push(response);
    });
    admission = admitConnections(server, { serving: 1, waiting: 4, ...options });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  }

  it('keeps an idle keep-alive connection while none wait, and closes it once a whole request waits', async () => {
    const port = await startWithLong({ idleAfterMs: 200 });
    const first = await client(port);
    first.get('/one');
    await expect.poll(first.text).toContain('{"path":"/one"}');
    // Idle for longer than idleAfterMs, nobody waiting: kept.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(first.socket.readableEnded).toBe(false);
    const second = await client(port);
    second.get('/two');
    await once(first.socket, 'end');
    await expect.poll(second.text).toContain('{"path":"/two"}');
    expect(first.text().match(/HTTP\/1\.1/g)).toHaveLength(1);
  });

  it('lets a response written past longAfterMs give its place back, up to `long` of them', async () => {
    const port = await startWithLong({ long: 1, longAfterMs: 100, idleAfterMs: 200 });
    const first = await client(port);
    first.get('/long');
    await expect.poll(first.text).toContain('[');
    const second = await client(port);
    second.get('/long');
    // The first has written for 100 ms while the second waits: its place goes to the second.
    await expect.poll(second.text).toContain('[');
    expect(admission.counts()).toEqual({ serving: 1, waiting: 0, long: 1 });
    const third = await client(port);
    third.get('/three');
    // One long response without a place at most: the second keeps its place, the third waits.
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(third.text()).toBe('');
    expect(admission.counts()).toEqual({ serving: 1, waiting: 1, long: 1 });
    // The first, done, is closed (idle while a request waits); then the second's place goes to the third.
    longResponses[0]?.end(']');
    await once(first.socket, 'end');
    await expect.poll(third.text).toContain('{"path":"/three"}');
    expect(admission.counts()).toEqual({ serving: 1, waiting: 0, long: 1 });
    expect(first.text().match(/HTTP\/1\.1/g)).toHaveLength(1);
  });

  it('keeps the place of a request whose answer has not begun, however long it takes', async () => {
    const port = await startWithLong({ longAfterMs: 100, idleAfterMs: 200 });
    const first = await client(port);
    first.get('/pending');
    await expect.poll(() => pendingResponses.length).toBe(1);
    const second = await client(port);
    second.get('/second');
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(second.text()).toBe('');
    expect(admission.counts()).toEqual({ serving: 1, waiting: 1, long: 0 });
    pendingResponses[0]?.end('{}');
    // Answered, then idle while the second waits: closed, and the second served.
    await expect.poll(second.text).toContain('{"path":"/second"}');
  });
});

describe('admitConnections, slow request heads', () => {
  async function startCapped(serving: number): Promise<number> {
    server = createServer((request, response) => response.end(JSON.stringify({ path: request.url })));
    admission = admitConnections(server, { serving, waiting: 4 });
    server.listen(0, '127.0.0.1');
    await once(server, 'listening');
    return (server.address() as { port: number }).port;
  }

  it('gives a free place to a whole request before a connection still sending its head, a byte at a time', async () => {
    const port = await startCapped(1);
    const first = await client(port);
    first.get('/first');
    await expect.poll(first.text).toContain('/first');
    const slow = await client(port);
    slow.socket.write('GET /slow HTTP/1.1\r\nHo');
    const whole = await client(port);
    whole.get('/whole');
    await expect.poll(() => admission.counts().waiting).toBe(2);
    first.socket.destroy();
    await expect.poll(whole.text).toContain('{"path":"/whole"}');
    // The slow one gets the place once its head is complete, whole as it sent it.
    slow.socket.write('st: x\r');
    await new Promise((resolve) => setTimeout(resolve, 50));
    slow.socket.write('\n\r\n');
    whole.socket.destroy();
    await expect.poll(slow.text).toContain('{"path":"/slow"}');
  });

  it('gives half the places to connections as they arrive, the other half only to whole requests', async () => {
    const port = await startCapped(4);
    const slow: Awaited<ReturnType<typeof client>>[] = [];
    for (let i = 0; i < 4; i++) {
      const connection = await client(port);
      connection.socket.write('GET /slow HTTP/1.1\r\n');
      slow.push(connection);
    }
    await expect.poll(() => admission.counts()).toEqual({ serving: 2, waiting: 2, long: 0 });
    const whole = [await client(port), await client(port)];
    for (const connection of whole) connection.get('/whole');
    for (const connection of whole) await expect.poll(connection.text).toContain('{"path":"/whole"}');
    expect(admission.counts()).toEqual({ serving: 4, waiting: 2, long: 0 });
    expect(slow.map((connection) => connection.text())).toEqual(['', '', '', '']);
  });
});
