import type { Socket } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { FastifyInstance } from 'fastify';

/**
 * Closes, when the app starts closing, every connection with no request in flight. Node counts one that
 * sent part of a head as active, so `forceCloseConnections: 'idle'` leaves it open, and close() stops the
 * timer that would have ended it: one such client kept close() waiting forever.
 * Over TLS a request's socket is the TLS one, and an HTTP/2 connection is left to Node's HTTP/2 server,
 * whose close() lets each session's streams finish.
 */
export function closeQuietConnectionsOnClose(app: FastifyInstance, tls: boolean): void {
  const inFlight = new Map<Socket, number>(); // each open connection's requests in flight
  app.server.on(tls ? 'secureConnection' : 'connection', (socket: Socket) => {
    if (tls && (socket as TLSSocket).alpnProtocol === 'h2') return;
    inFlight.set(socket, 0);
    socket.once('close', () => inFlight.delete(socket));
  });
  const count = (socket: Socket, by: number): void => {
    const now = inFlight.get(socket);
    if (now !== undefined) inFlight.set(socket, now + by);
  };
  app.addHook('onRequest', (request, _reply, done) => {
    count(request.raw.socket, 1);
    done();
  });
  app.addHook('onResponse', (request, _reply, done) => {
    count(request.raw.socket, -1);
    done();
  });
  app.addHook('preClose', (done) => {
    for (const [socket, requests] of inFlight) if (requests === 0) socket.destroy();
    done();
  });
}
