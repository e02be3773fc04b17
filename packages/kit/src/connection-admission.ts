import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface AdmissionOptions {
  /** Places: most connections served at once, but for long responses that gave theirs back (MAX_CONNECTIONS). */
  serving: number;
  /** Most connections waiting for a place; a connection beyond them is closed unanswered. */
  waiting: number;
  /** How long a connection waits for a place before it is answered 503; default 10 s. */
  maxWaitMs?: number;
  /** How long a connection is served while whole requests wait before its next answer closes it; default 2 s. */
  turnAfterMs?: number;
  /** Most responses written past `longAfterMs` that give their place back (to a slow reader); default LONG_PER_PLACE x `serving`. */
  long?: number;
  /** How long after its request a response still being written gives its place back while others wait; default 250 ms. */
  longAfterMs?: number;
  /** How long a served connection may sit between two requests while others wait before it is closed; default 1 s. */
  idleAfterMs?: number;
  /** Called when a connection is closed unanswered, every waiting place being taken. */
  onDrop?: () => void;
}

export interface Admission {
  /**
   * Takes a connection of the probe listener (run.ts): its probe is served at once, whatever the cap;
   * any other request is answered 404 and closed.
   */
  probeOnly: (socket: Socket) => void;
  /** Closes every waiting connection: for the start of the server's close. */
  closeWaiting: () => void;
  /** Connections holding a place, waiting for one, and writing a long response without one (the tests read them). */
  counts: () => { serving: number; waiting: number; long: number };
}

/**
 * Long responses that may give their place back, per place: a slow reader's list stream holds one
 * batch sized to a second of its reading (packages/users/src/list-stream.ts), tens of kilobytes.
 */
const LONG_PER_PLACE = 8;

/** The most connections served at once for `serving` places: those with a place, and the long responses without. */
export const servedAtMost = (serving: number): number => serving * (1 + LONG_PER_PLACE);

/** A served connection's request in progress, or its last one. */
interface Exchange {
  response: ServerResponse;
  since: number;
}

/** A probe's request line: the orchestrator's GET /health or /ready, with or without a query. */
const probeRequest = /^GET \/(?:health|ready)[ ?]/;

const headEnd = Buffer.from('\r\n\r\n');
/** A head this long without its end is handed to Node's parser, which refuses it (431). */
const LONGEST_HEAD = 16 * 1024;

const busyBody = JSON.stringify({ error: 'Too many connections: try again shortly' });
const fixedAnswer = (status: string, headers: string, body: string, connection = 'close'): Buffer =>
  Buffer.from(
    `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\n${headers}` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: ${connection}\r\n\r\n${body}`,
  );
/** The answer to a connection that waited too long: written as it is, no request parsed. */
const busyAnswer = fixedAnswer('503 Service Unavailable', 'Retry-After: 1\r\n', busyBody);
/** The same, to a connection kept open after it (keptAfterBusy). */
const busyKeepAlive = fixedAnswer('503 Service Unavailable', 'Retry-After: 1\r\n', busyBody, 'keep-alive');
/**
 * Whether a connection can stay open once its waiting request, whose head is `head` (up to its blank
 * line), is answered 503: an HTTP/1.1 request that does not ask to close and announces no body, so
 * that what follows its head is the next request (a body would have to be read and dropped first).
 */
const keptAfterBusy = (head: string): boolean =>
  / HTTP\/1\.1\r\n/.test(head) && !/\r\n(?:content-length|transfer-encoding)[ \t]*:|\r\nconnection[ \t]*:[^\r]*close/i.test(head);
/** The answer to a request other than a probe on the probe listener. */
const notProbeAnswer = fixedAnswer('404 Not Found', '', JSON.stringify({ error: 'Only GET /health and GET /ready are served here' }));
/** Enough of a request line to tell a probe from anything else. */
const REQUEST_LINE_PEEK = 16;

/**
 * Caps the connections Node's HTTP server serves at once, so that a flood of clients cannot grow
 * the heap (about 20 KB a connection with its request in flight) or the event loop's turns (every
 * ready connection is served in one turn: at 16,000 a turn took seconds and the health probes timed out).
 *
 * A connection above the cap is not closed at once (a client reconnects at once, and a flood of
 * reconnects costs more than it saves) but waits, its first bytes buffered by the socket and not
 * parsed, until a served connection closes. One that waits longer than `maxWaitMs` is answered a
 * fixed 503 JSON with Retry-After: an answer a client can act on, at the cost of one write. If its
 * whole request is in hand and has no body, the connection stays open and waits again with its next
 * request; any other is closed. Under a flood, the clients' reconnects after their 503s (accepting,
 * then closing, 16,000 connections) took from a quarter to most of the serving for the rest of the
 * run. While whole requests wait, a connection served for longer than `turnAfterMs` is closed after
 * its next answer (`Connection: close`), so the places turn over without a reconnect per request,
 * well before the waiting ones' 503.
 * A waiting connection whose request is a probe (GET /health or /ready) is served at once, past the
 * cap: an orchestrator must never take a busy replica for a dead one. Beyond `waiting`, a new
 * connection is closed unanswered, as Node's own maxConnections does.
 *
 * Half the places go to connections as they arrive; the other half only to whole requests. Once
 * half the places are taken (or connections wait), a new connection waits until its request head
 * is complete, and places go in the order heads completed; one that never completes it is answered
 * 503 when its wait is over. So clients sending their heads a byte a second (slowloris) hold half
 * the places at most, until Node's headersTimeout answers them 408, and whole requests always have
 * the other half. Not a place taken back from a served connection that has sent nothing yet: a
 * load generator that opens all its connections before it writes, or a head in the kernel's
 * buffer not yet read, looks the same from here.
 *
 * While whole requests wait, places go to connections at work (sweepServed): an idle keep-alive
 * connection is closed, and a response still being written after `longAfterMs` (a slow reader of a
 * long list) gives its place back. So the places can be few, for throughput (every connection read
 * in a turn of the event loop costs the others), without pools' idle connections or slow readers
 * taking them all.
 *
 * Takes over the server's `connection` listeners present now (Node's HTTP one): call it before
 * anything else listens for connections.
 */
export function admitConnections(server: Server, options: AdmissionOptions): Admission {
  const { maxWaitMs = 10_000, turnAfterMs = 2_000, longAfterMs = 250, idleAfterMs = 1_000 } = options;
  const longLimit = options.long ?? LONG_PER_PLACE * options.serving;
  /** Places given to connections as they arrive, before they send anything. */
  const onArrival = Math.ceil(options.serving / 2);
  const serveListeners = server.listeners('connection') as ((socket: Socket) => void)[];
  server.removeAllListeners('connection');
  /** Waiting connections by arrival (a Map keeps insertion order), with the time each arrived. */
  const waiting = new Map<Socket, number>();
  /** The waiting connections whose request head is complete, in the order they completed it. */
  const ready = new Set<Socket>();
  /** Served connections: since when, and the exchange each is in (none before its first request). */
  const served = new Map<Socket, { since: number; exchange: Exchange | undefined }>();
  /** Served connections whose long response gave its place back: they hold none. */
  const released = new Set<Socket>();
  /** Served connections seen between two requests, with the exchange they had then and when first seen so. */
  const idle = new Map<Socket, { exchange: Exchange; since: number }>();
  let serving = 0;

  const serve = (socket: Socket): void => {
    serving += 1;
    served.set(socket, { since: Date.now(), exchange: undefined });
    socket.once('close', () => {
      served.delete(socket);
      idle.delete(socket);
      if (released.delete(socket)) return;
      serving -= 1;
      admitWaiting();
    });
    for (const listener of serveListeners) listener.call(server, socket);
  };
  const admitWaiting = (): void => {
    for (const socket of ready) {
      if (serving >= options.serving) return;
      takeOut(socket);
      if (!socket.destroyed) serve(socket);
    }
  };
  const onWaitingClose = function (this: Socket): void {
    waiting.delete(this);
    ready.delete(this);
  };
  // The server keeps half-open connections (Node's HTTP server does): a client gone while waiting is closed here.
  const onWaitingEnd = function (this: Socket): void {
    this.destroy();
  };
  // A waiting client that resets its connection must not be an unhandled error.
  const ignore = (): void => undefined;
  /** What each waiting connection has sent so far, given back to the socket (for Node's parser) as it leaves the wait. */
  const received = new WeakMap<Socket, Buffer>();
  /** Connections of the probe listener: served if their request is a probe, else answered 404. */
  const probesOnly = new WeakSet<Socket>();
  /** Connections served past the cap for their probe: closed after its answer, so no other request follows it in. */
  const pastCap = new WeakSet<Socket>();
  // Reads what a waiting connection sends until its head is complete. Kept aside, not put back at
  // once: the stream would call this again for what was put back, and again.
  const peek = function (this: Socket): void {
    for (let chunk = this.read() as Buffer | null; chunk !== null; chunk = this.read() as Buffer | null) {
      const before = received.get(this);
      received.set(this, before === undefined ? chunk : Buffer.concat([before, chunk]));
    }
    const head = received.get(this);
    if (head === undefined) return;
    if (probeRequest.test(head.toString('latin1', 0, REQUEST_LINE_PEEK))) {
      takeOut(this);
      pastCap.add(this);
      serve(this);
      return;
    }
    if (probesOnly.has(this)) {
      if (head.length < REQUEST_LINE_PEEK && head.indexOf(headEnd) === -1) return;
      takeOut(this);
      // No TIME_WAIT to leave to the client here (a Unix socket, and no flood): closed from this side.
      this.resume();
      this.end(notProbeAnswer);
      return;
    }
    if (head.indexOf(headEnd) === -1 && head.length < LONGEST_HEAD) return;
    this.off('readable', peek);
    ready.add(this);
    admitWaiting();
  };
  const takeOut = (socket: Socket): void => {
    waiting.delete(socket);
    ready.delete(socket);
    const head = received.get(socket);
    if (head !== undefined) {
      received.delete(socket);
      socket.unshift(head);
    }
    socket.off('readable', peek);
    socket.off('close', onWaitingClose);
    socket.off('end', onWaitingEnd);
  };
  // Oldest first: stops at the first connection that has not waited its time.
  const answerLongWaits = (): void => {
    const oldest = Date.now() - maxWaitMs;
    for (const [socket, arrived] of waiting) {
      if (arrived > oldest) return;
      const head = received.get(socket);
      const end = head?.indexOf(headEnd) ?? -1;
      if (head !== undefined && end !== -1 && keptAfterBusy(head.toString('latin1', 0, end + 2))) {
        socket.write(busyKeepAlive);
        // Its request answered, it waits again (as a new arrival, last in line) with what follows it.
        const rest = head.subarray(end + headEnd.length);
        if (rest.length > 0) received.set(socket, rest);
        else received.delete(socket);
        ready.delete(socket);
        waiting.delete(socket);
        waiting.set(socket, Date.now());
        socket.off('readable', peek);
        socket.on('readable', peek);
        peek.call(socket);
        continue;
      }
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

  // While whole requests wait for a place, a place is for a connection at work. One between two
  // requests for idleAfterMs is closed (as its keep-alive timeout would, only sooner): a client's
  // pool reconnects when it needs to, and waits its turn. Not sooner: a client may be writing its
  // next request as the connection closes, and must then send it again (the keep-alive race). One
  // still writing its response longAfterMs after the request (a slow reader of a long list) gives
  // its place back, up to `long` of them, and is closed after its next answer; one whose answer has
  // not begun (its handler at work, or waiting on the database) keeps it. One that has sent no
  // request yet is headersTimeout's business.
  const sweepServed = (): void => {
    if (ready.size === 0) {
      idle.clear();
      return;
    }
    const now = Date.now();
    for (const [socket, { exchange }] of served) {
      if (exchange === undefined) continue;
      if (exchange.response.writableFinished) {
        const seen = idle.get(socket);
        if (seen?.exchange !== exchange) idle.set(socket, { exchange, since: now });
        else if (now - seen.since >= idleAfterMs) socket.end();
      } else if (
        exchange.response.headersSent &&
        !released.has(socket) &&
        released.size < longLimit &&
        now - exchange.since >= longAfterMs
      ) {
        released.add(socket);
        serving -= 1;
      }
    }
    admitWaiting();
  };

  const sweep = setInterval(
    () => {
      answerLongWaits();
      sweepServed();
    },
    Math.max(10, Math.min(maxWaitMs, longAfterMs) / 2),
  );
  sweep.unref();
  server.once('close', () => clearInterval(sweep));

  const wait = (socket: Socket): void => {
    waiting.set(socket, Date.now());
    socket.on('close', onWaitingClose);
    socket.on('end', onWaitingEnd);
    socket.on('error', ignore);
    socket.on('readable', peek);
  };
  server.on('connection', (socket: Socket) => {
    if (serving < onArrival && waiting.size === 0) return serve(socket);
    if (waiting.size >= options.waiting) {
      socket.destroy();
      options.onDrop?.();
      return;
    }
    wait(socket);
  });
  // Runs before the app's own request listener: while whole requests wait, a long-served connection ends after
  // this answer; a probe's served past the cap, and one whose long response gave its place back, end after it.
  server.prependListener('request', (request, response) => {
    const now = Date.now();
    const connection = served.get(request.socket);
    if (connection === undefined) return;
    connection.exchange = { response, since: now };
    if (pastCap.has(request.socket) || released.has(request.socket)) response.shouldKeepAlive = false;
    else if (ready.size > 0 && now - connection.since >= turnAfterMs) response.shouldKeepAlive = false;
  });

  return {
    probeOnly: (socket) => {
      probesOnly.add(socket);
      wait(socket);
    },
    closeWaiting: () => {
      for (const socket of waiting.keys()) socket.destroy();
      waiting.clear();
      ready.clear();
    },
    counts: () => ({ serving, waiting: waiting.size, long: released.size }),
  };
}
