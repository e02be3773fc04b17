import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { admitConnections, type Admission, type AdmissionOptions } from '../src/admission/connection-admission.js';

let server: Server;
let admission: Admission;
let dropped = 0;
const clients: Socket[] = [];
/** Responses to GET /long: their head and a first chunk written, ended by the test. */
const longResponses: ServerResponse[] = [];
/** Responses to GET /pending: nothing written yet (a handler at work), ended by the test. */
const pendingResponses: ServerResponse[] = [];

/** A plain Node HTTP server answering its path in JSON behind the admission; the admission's port. */
async function start(options: Partial<AdmissionOptions> & { places: number }): Promise<number> {
  longResponses.length = 0;
  pendingResponses.length = 0;
  server = createServer((request, response) => {
    if (request.url === '/pending') return void pendingResponses.push(response);
    if (request.url === '/long') {
      response.write('[');
      return void longResponses.push(response);
    }
    response.setHeader('content-type', 'application/json');
    response.end(JSON.stringify({ path: request.url }));
  });
  dropped = 0;
  admission = admitConnections(server, { waiting: 4, onDrop: () => (dropped += 1), ...options });
  // The HTTP server listens somewhere, as runService has it, so that Node runs its timeouts.
  server.listen(0, '127.0.0.1');
  admission.listener.listen(0, '127.0.0.1');
  await Promise.all([once(server, 'listening'), once(admission.listener, 'listening')]);
  admission.open();
  return (admission.listener.address() as { port: number }).port;
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

/** A client that sent `path` and got its answer. */
async function answered(port: number, path: string): Promise<Awaited<ReturnType<typeof client>>> {
  const connection = await client(port);
  connection.get(path);
  await expect.poll(connection.text).toContain(path === '/long' ? '[' : `{"path":"${path}"}`);
  return connection;
}

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

afterEach(async () => {
  for (const socket of clients.splice(0)) socket.destroy();
  for (const response of [...longResponses, ...pendingResponses]) response.destroy();
  await admission.close();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

describe('admitConnections', () => {
  it('serves up to the cap; a connection beyond it waits unread, and is served once a served one closes', async () => {
    const port = await start({ places: 1 });
    const first = await answered(port, '/first');
    const second = await client(port);
    second.get('/second');
    await expect.poll(() => admission.counts()).toEqual({ serving: 1, waiting: 1, released: 0 });
    first.socket.destroy();
    await expect.poll(second.text).toContain('{"path":"/second"}');
    expect(admission.counts()).toEqual({ serving: 1, waiting: 0, released: 0 });
  });

  it('lets a probe on the port wait like any request: the cap holds for every path', async () => {
    const port = await start({ places: 1, maxWaitMs: 60_000 });
    const busy = await client(port);
    busy.get('/pending');
    await expect.poll(() => pendingResponses.length).toBe(1);
    const probes = [await client(port), await client(port)];
    probes[0]?.get('/health');
    probes[1]?.get('/ready?full=1');
    await expect.poll(() => admission.counts()).toEqual({ serving: 1, waiting: 2, released: 0 });
    // A request whose answer has not begun keeps its place (no release rule takes it).
    await pause(300);
    expect(probes.map((probe) => probe.text())).toEqual(['', '']);
    pendingResponses[0]?.end('{}');
    busy.socket.destroy();
    await expect.poll(() => probes[0]?.text()).toContain('{"path":"/health"}');
  });

  it('closes a connection unanswered once every waiting place is taken, and says so', async () => {
    const port = await start({ places: 1, waiting: 1 });
    await client(port);
    await client(port);
    await expect.poll(() => admission.counts().waiting).toBe(1);
    const third = await client(port);
    await once(third.socket, 'close');
    expect(dropped).toBe(1);
  });

  it('close() stops accepting, closes the waiting connections and resolves once the served ones are gone', async () => {
    const port = await start({ places: 1 });
    const served = await answered(port, '/served');
    const kept = await client(port);
    await expect.poll(() => admission.counts().waiting).toBe(1);
    let closed = false;
    const closing = admission.close().then(() => (closed = true));
    await once(kept.socket, 'close');
    expect(admission.counts().waiting).toBe(0);
    await pause(50);
    expect(closed).toBe(false);
    served.socket.destroy();
    await closing;
  });
});

describe('admitConnections, waits and turns', () => {
  it('answers a connection that waited too long 503 JSON with Retry-After and Connection: close, and lets the client close first', async () => {
    const port = await start({ places: 1, maxWaitMs: 100, firstRequestMs: 60_000 });
    await client(port);
    const late = await client(port);
    late.socket.write('POST /late HTTP/1.1\r\nHost: x\r\nContent-Length: 2\r\n\r\n{}');
    await expect.poll(late.text).toContain('\r\n\r\n{"error":"Too many connections: try again shortly"}');
    expect(late.text()).toMatch(/^HTTP\/1\.1 503 Service Unavailable\r\n/);
    expect(late.text()).toMatch(/\r\nRetry-After: 1\r\n/);
    expect(late.text()).toMatch(/\r\nConnection: close\r\n/i);
    expect(admission.counts()).toEqual({ serving: 1, waiting: 0, released: 0 });
    // The server's side has ended after its answer; the client ends its own (net's default), and the connection closes.
    await expect.poll(() => late.socket.destroyed).toBe(true);
  });

  it('never touches keep-alive while nobody waits; while others wait, ends a connection served longer than turnAfterMs after its answer', async () => {
    const port = await start({ places: 1, turnAfterMs: 200, idleAfterMs: 60_000 });
    const first = await answered(port, '/one');
    await pause(300);
    first.get('/two');
    await expect.poll(first.text).toContain('/two');
    expect(first.text().split('\r\nConnection: keep-alive\r\n')).toHaveLength(3);
    const second = await client(port);
    second.get('/second');
    await expect.poll(() => admission.counts().waiting).toBe(1);
    first.get('/three');
    await expect.poll(first.text).toContain('/three');
    expect(first.text()).toMatch(/\r\nConnection: close\r\n[^]*\/three/i);
    await expect.poll(second.text).toContain('/second');
  });
});

describe('admitConnections, places for connections at work', () => {
  it('keeps an idle keep-alive connection while none wait, and closes it once one waits and it stays idle idleAfterMs', async () => {
    const port = await start({ places: 1, idleAfterMs: 200 });
    const first = await answered(port, '/one');
    await pause(400);
    expect(first.socket.readableEnded).toBe(false);
    const second = await client(port);
    second.get('/two');
    await once(first.socket, 'end');
    await expect.poll(second.text).toContain('{"path":"/two"}');
    expect(first.text().match(/HTTP\/1\.1/g)).toHaveLength(1);
  });

  it('lets a response still written longAfterMs after its request give its place back, and ends that connection after its answer', async () => {
    const port = await start({ places: 1, longAfterMs: 100, idleAfterMs: 60_000 });
    const first = await answered(port, '/long');
    const second = await client(port);
    second.get('/second');
    await expect.poll(second.text).toContain('{"path":"/second"}');
    expect(admission.counts()).toEqual({ serving: 1, waiting: 0, released: 1 });
    longResponses[0]?.end(']');
    first.get('/after');
    await once(first.socket, 'end');
    // Its answer was already begun when it gave its place back: the next one is announced as its last.
    expect(first.text()).toMatch(
      /^HTTP\/1\.1 200 OK\r\n[^]*\r\n0\r\n\r\nHTTP\/1\.1 200 OK\r\n(?:.*\r\n)*?Connection: close\r\n[^]*"\/after"/i,
    );
    await expect.poll(() => admission.counts().released).toBe(0);
  });
});

describe('admitConnections, slow request heads', () => {
  it('while others wait, closes a connection that has sent nothing for idleAfterMs, and keeps it while none wait', async () => {
    const port = await start({ places: 1, firstRequestMs: 50, idleAfterMs: 200 });
    const silent = await client(port);
    await expect.poll(() => admission.counts().serving).toBe(1);
    await pause(300);
    expect(silent.socket.readableEnded).toBe(false);
    const whole = await client(port);
    whole.get('/whole');
    await once(silent.socket, 'end');
    await expect.poll(whole.text).toContain('{"path":"/whole"}');
    // It gave no place back without being closed: nothing it sent was a head begun.
    expect(admission.counts().released).toBe(0);
  });

  it('while others wait, a connection with no whole request head after firstRequestMs gives its place back, and a whole request is served', async () => {
    const port = await start({ places: 1, firstRequestMs: 100 });
    const slow = await client(port);
    slow.socket.write('GET /slow HTTP/1.1\r\nHo');
    await expect.poll(() => admission.counts().serving).toBe(1);
    const whole = await client(port);
    whole.get('/whole');
    await expect.poll(whole.text).toContain('{"path":"/whole"}');
    expect(admission.counts()).toEqual({ serving: 1, waiting: 0, released: 1 });
    // The slow one is still Node's: its head completes, it is answered, and its connection ends after it.
    slow.socket.write('st: x\r\n\r\n');
    await expect.poll(slow.text).toContain('{"path":"/slow"}');
    expect(slow.text()).toMatch(/\r\nConnection: close\r\n/i);
  });

  it('gives back at most 8 places per place to slow heads; beyond, a slow head is closed, and whole requests still get served', async () => {
    const port = await start({ places: 1, waiting: 32, firstRequestMs: 50 });
    const slow: Awaited<ReturnType<typeof client>>[] = [];
    for (let i = 0; i < 12; i++) {
      const connection = await client(port);
      connection.socket.write('GET /slow HTTP/1.1\r\n');
      slow.push(connection);
    }
    const whole = await client(port);
    whole.get('/whole');
    await expect.poll(whole.text, { timeout: 5_000 }).toContain('{"path":"/whole"}');
    expect(admission.counts().released).toBe(8);
    expect(slow.filter((connection) => connection.socket.destroyed || connection.socket.readableEnded)).toHaveLength(4);
  });
});
