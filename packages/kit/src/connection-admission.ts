import type { Server } from 'node:http';
import type { Socket } from 'node:net';

export interface AdmissionOptions {
  /** Most connections served at once (MAX_CONNECTIONS). */
  serving: number;
  /** Most connections waiting for a place; a connection beyond them is closed unanswered. */
  waiting: number;
  /** How long a connection waits for a place before it is answered 503; default 10 s. */
  maxWaitMs?: number;
  /** How long a connection is served while others wait before its next answer closes it; default 10 s. */
  turnAfterMs?: number;
  /** Called when a connection is closed unanswered, every waiting place being taken. */
  onDrop?: () => void;
}

export interface Admission {
  /** Closes every waiting connection: for the start of the server's close. */
  closeWaiting: () => void;
  /** Connections served and waiting now (the metrics and the tests read them). */
  counts: () => { serving: number; waiting: number };
}

/** A probe's request line: the orchestrator's GET /health or /ready, with or without a query. */
const probeRequest = /^GET \/(?:health|ready)[ ?]/;

const busyBody = JSON.stringify({ error: 'Too many connections: try again shortly' });
/** The answer to a connection that waited too long: written as it is, no request parsed. */
const busyAnswer = Buffer.from(
  'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\n' +
    `Content-Length: ${Buffer.byteLength(busyBody)}\r\nConnection: close\r\n\r\n${busyBody}`,
);

/**
 * Caps the connections Node's HTTP server serves at once, so that a flood of clients cannot grow
 * the heap (about 20 KB a connection with its request in flight) or the event loop's turns (every
 * ready connection is served in one turn: at 16,000 a turn took seconds and the health probes timed out).
 *
 * A connection above the cap is not closed at once (a client reconnects at once, and a flood of
 * reconnects costs more than it saves) but waits, its first bytes buffered by the socket and not
 * parsed, until a served connection closes. One that waits longer than `maxWaitMs` is answered a
 * fixed 503 JSON with Retry-After and closed: an answer a client can act on, at the cost of one
 * write. While connections wait, a connection served for longer than `turnAfterMs` is closed after
 * its next answer (`Connection: close`), so the places turn over without a reconnect per request.
 * A waiting connection whose request is a probe (GET /health or /ready) is served at once, past the
 * cap: an orchestrator must never take a busy replica for a dead one. Beyond `waiting`, a new
 * connection is closed unanswered, as Node's own maxConnections does.
 *
 * Takes over the server's `connection` listeners present now (Node's HTTP one): call it before
 * anything else listens for connections.
 */
export function admitConnections(server: Server, options: AdmissionOptions): Admission {
  const { maxWaitMs = 10_000, turnAfterMs = 10_000 } = options;
  const serveListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  /** Waiting connections by arrival (a Map keeps insertion order), with the time each arrived. */
  const waiting = new Map<Socket, number>();
  const servedSince = new WeakMap<Socket, number>();
  let serving = 0;

  const serve = (socket: Socket): void => {
    serving += 1;
    servedSince.set(socket, Date.now());
    socket.once('close', () => {
      serving -= 1;
      admitWaiting();
    });
    for (const listener of serveListeners) listener.call(server, socket);
  };
  const admitWaiting = (): void => {
    for (const socket of waiting.keys()) {
      if (serving >= options.serving) return;
      takeOut(socket);
      if (!socket.destroyed) serve(socket);
    }
  };
  const onWaitingClose = function (this: Socket): void {
    waiting.delete(this);
  };
  // The server keeps half-open connections (Node's HTTP server does): a client gone while waiting is closed here.
  const onWaitingEnd = function (this: Socket): void {
    this.destroy();
  };
  // A waiting client that resets its connection must not be an unhandled error.
  const ignore = (): void => undefined;
  const peek = function (this: Socket): void {
    const head = this.read() as Buffer | null;
    if (head === null) return;
    this.unshift(head);
    this.off('readable', peek);
    if (probeRequest.test(head.toString('latin1', 0, 16))) {
      takeOut(this);
      serve(this);
    }
  };
  const takeOut = (socket: Socket): void => {
    waiting.delete(socket);
    socket.off('readable', peek);
    socket.off('close', onWaitingClose);
    socket.off('end', onWaitingEnd);
  };
  // Oldest first: stops at the first connection that has not waited its time.
  const answerLongWaits = (): void => {
    const oldest = Date.now() - maxWaitMs;
    for (const [socket, arrived] of waiting) {
      if (arrived > oldest) return;
      takeOut(socket);
      // The client closes first, as the answer asks (its FIN ends the socket: onWaitingEnd's twin
      // below), so the closed connection's TIME_WAIT is the client's: closed from here, a flood's
      // reconnects met the server's TIME_WAITs and their SYNs waited out retransmits (throughput
      // fell to a twentieth). What it sent is read and dropped meanwhile.
      socket.once('end', () => socket.destroy());
      socket.setTimeout(maxWaitMs, () => socket.destroy());
      socket.resume();
      socket.write(busyAnswer);
    }
  };
  const sweep = setInterval(answerLongWaits, Math.max(10, maxWaitMs / 4));
  sweep.unref();
  server.once('close', () => clearInterval(sweep));

  server.on('connection', (socket: Socket) => {
    if (serving < options.serving && waiting.size === 0) return serve(socket);
    if (waiting.size >= options.waiting) {
      socket.destroy();
      options.onDrop?.();
      return;
    }
    waiting.set(socket, Date.now());
    socket.on('close', onWaitingClose);
    socket.on('end', onWaitingEnd);
    socket.on('error', ignore);
    socket.on('readable', peek);
  });
  // Runs before the app's own request listener: while connections wait, a long-served connection ends after this answer.
  server.prependListener('request', (request, response) => {
    if (waiting.size > 0 && Date.now() - (servedSince.get(request.socket) ?? Date.now()) >= turnAfterMs) response.shouldKeepAlive = false;
  });

  return {
    closeWaiting: () => {
      for (const socket of waiting.keys()) socket.destroy();
      waiting.clear();
    },
    counts: () => ({ serving, waiting: waiting.size }),
  };
}
