import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import { createServer as createNetServer, type Server as NetServer, type Socket } from 'node:net';

export interface AdmissionOptions {
  /** Places: most connections served at once, besides those that gave theirs back (MAX_CONNECTIONS). */
  places: number;
  /** Most connections waiting for a place; one beyond them is closed unanswered. */
  waiting: number;
  /** How long a connection waits for a place before it is answered 503; default 10 s. */
  maxWaitMs?: number;
  /** While others wait, a connection served this long is closed after its next answer; default 500 ms. */
  turnAfterMs?: number;
  /** While others wait, a connection that has sent part of a request head, not all, this long gives its place back; default 100 ms. */
  firstRequestMs?: number;
  /** While others wait, a connection idle this long (before its first request or between two) is closed; default 1 s. */
  idleAfterMs?: number;
  /** While others wait, a response still being written this long after its request gives its place back; default 250 ms. */
  longAfterMs?: number;
  /** Called when a connection is closed unanswered, every waiting place being taken. */
  onDrop?: () => void;
}

export interface Admission {
  /** The listener to bind to the public port: it accepts, and hands connections to the HTTP server. */
  listener: NetServer;
  /** Starts handing connections over (until then they wait): once the HTTP server listens, so that Node runs its timeouts on them. */
  open: () => void;
  /**
   * Stops accepting and closes every waiting connection; resolves once every served connection has
   * closed (the HTTP server's own close() counts only the connections it accepted itself).
   */
  close: () => Promise<void>;
  /** Connections holding a place, waiting for one, and served without one (the tests read them). */
  counts: () => { serving: number; waiting: number; released: number };
  /** Whether the HTTP server's connection is one this admission handed over (a public port's), from its 'connection' event on. */
  serves: (socket: Socket) => boolean;
}

/** Connections served without a place, per place: slow readers and slow request heads. */
const RELEASED_PER_PLACE = 8;

/** The most connections served at once for `places`: those with a place, and those that gave theirs back. */
export const servedAtMost = (places: number): number => places * (1 + RELEASED_PER_PLACE);

const busyBody = JSON.stringify({ error: 'Too many connections: try again shortly' });
/** The answer to a connection that waited too long, written as it is: its request is never parsed. */
const busyAnswer = Buffer.from(
  'HTTP/1.1 503 Service Unavailable\r\nContent-Type: application/json; charset=utf-8\r\nRetry-After: 1\r\n' +
    `Content-Length: ${Buffer.byteLength(busyBody)}\r\nConnection: close\r\n\r\n${busyBody}`,
);

/** A connection handed to the HTTP server. */
interface Served {
  /** When it was handed over. */
  since: number;
  /** Its response in progress, or its last one; none before its first request. */
  response: ServerResponse | undefined;
  /** When its request in progress came. */
  requestAt: number;
  /** The finished response a sweep first saw it idle after, and when: its idle time counts from then. */
  idleAfter: ServerResponse | undefined;
  idleSince: number;
  /** It gave its place back: its next answer closes it. */
  released: boolean;
}

/**
 * Accepts the public port's connections on a listener of its own and hands at most `places` of them
 * at once to Node's HTTP server (`server.emit('connection', socket)`, as Node documents); the others
 * wait, paused, unread, in the order they came. Every rule and why: ./README.md.
 */
export function admitConnections(server: Server, options: AdmissionOptions): Admission {
  const { maxWaitMs = 10_000, turnAfterMs = 500, firstRequestMs = 100, idleAfterMs = 1_000, longAfterMs = 250 } = options;
  const releasedLimit = RELEASED_PER_PLACE * options.places;
  /** Waiting connections, in arrival order (a Map keeps it), with when each arrived. */
  const waiting = new Map<Socket, number>();
  const served = new Map<Socket, Served>();
  let serving = 0;
  let released = 0;
  let drained: (() => void) | undefined;
  let opened = false;

  const onWaitingClose = function (this: Socket): void {
    waiting.delete(this);
  };
  // A waiting client that resets its connection must not be an unhandled error.
  const ignore = (): void => undefined;

  const serve = (socket: Socket): void => {
    serving += 1;
    const now = Date.now();
    const connection: Served = { since: now, response: undefined, requestAt: now, idleAfter: undefined, idleSince: now, released: false };
    served.set(socket, connection);
    socket.once('close', () => {
      served.delete(socket);
      if (connection.released) released -= 1;
      else serving -= 1;
      if (drained !== undefined && served.size === 0) drained();
      admitWaiting();
    });
    server.emit('connection', socket);
    socket.resume();
  };
  const admitWaiting = (): void => {
    for (const socket of waiting.keys()) {
      if (!opened || serving >= options.places) return;
      waiting.delete(socket);
      socket.off('close', onWaitingClose);
      socket.off('error', ignore);
      if (!socket.destroyed) serve(socket);
    }
  };
  const release = (connection: Served): void => {
    connection.released = true;
    serving -= 1;
    released += 1;
  };

  const listener = createNetServer({ pauseOnConnect: true, allowHalfOpen: true, noDelay: true }, (socket) => {
    if (opened && serving < options.places && waiting.size === 0) return serve(socket);
    if (waiting.size >= options.waiting) {
      socket.destroy();
      options.onDrop?.();
      return;
    }
    waiting.set(socket, Date.now());
    socket.on('close', onWaitingClose);
    socket.on('error', ignore);
  });

  // Oldest first: stops at the first connection that has not waited its time.
  const answerLongWaits = (now: number): void => {
    for (const [socket, arrived] of waiting) {
      if (arrived > now - maxWaitMs) return;
      waiting.delete(socket);
      socket.off('close', onWaitingClose);
      // The client closes first, as the answer asks, so the TIME_WAIT is the client's and not in the way
      // of its reconnect; what it sent is read and dropped meanwhile, so the close is not a reset.
      socket.once('end', () => socket.destroy());
      socket.setTimeout(maxWaitMs, () => socket.destroy());
      socket.resume();
      socket.end(busyAnswer);
    }
  };

  // While connections wait, a place is for a connection at work (README.md, "Places").
  const sweepServed = (now: number): void => {
    for (const [socket, connection] of served) {
      const { response } = connection;
      if (response === undefined) {
        // Nothing sent yet (a client connected ahead of need) is idle, as between two requests; part of a
        // request head and not the rest is a slow client.
        if (connection.released) continue;
        if (socket.bytesRead === 0) {
          if (now - connection.since >= idleAfterMs) socket.end();
        } else if (now - connection.since >= firstRequestMs) {
          if (released < releasedLimit) release(connection);
          else socket.destroy();
        }
      } else if (response.writableFinished) {
        if (connection.idleAfter !== response) {
          connection.idleAfter = response;
          connection.idleSince = now;
        } else if (now - connection.idleSince >= idleAfterMs) socket.end();
      } else if (!connection.released && response.headersSent && released < releasedLimit && now - connection.requestAt >= longAfterMs) {
        // A slow reader of a long answer.
        release(connection);
      }
    }
    admitWaiting();
  };

  const sweep = setInterval(
    () => {
      if (waiting.size === 0) return;
      const now = Date.now();
      answerLongWaits(now);
      sweepServed(now);
    },
    Math.max(10, Math.min(firstRequestMs, longAfterMs, maxWaitMs) / 2),
  );
  sweep.unref();
  listener.once('close', () => clearInterval(sweep));

  // Runs before the app's own request listener, so its answer's head is still to be written.
  server.prependListener('request', (request: IncomingMessage, response: ServerResponse) => {
    const connection = served.get(request.socket);
    if (connection === undefined) return;
    const now = Date.now();
    connection.response = response;
    connection.requestAt = now;
    if (connection.released || (waiting.size > 0 && now - connection.since >= turnAfterMs)) response.setHeader('connection', 'close');
  });

  return {
    listener,
    open: () => {
      opened = true;
      admitWaiting();
    },
    close: () => {
      listener.close();
      for (const socket of waiting.keys()) socket.destroy();
      waiting.clear();
      if (served.size === 0) return Promise.resolve();
      return new Promise<void>((resolve) => (drained = resolve));
    },
    counts: () => ({ serving, waiting: waiting.size, released }),
    serves: (socket) => served.has(socket),
  };
}
