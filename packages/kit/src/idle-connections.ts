import type { Socket } from 'node:net';
import type { FastifyInstance } from 'fastify';

/**
 * Closes, when the app starts closing, every connection with no request in flight. Node counts one that
 * sent part of a head as active, so `forceCloseConnections: 'idle'` leaves it open, and close() stops the
 * timer that would have ended it: one such client kept close() waiting forever.
 */
export function closeQuietConnectionsOnClose(app: FastifyInstance): void {
  const inFlight = new Map<Socket, number>(); // each open connection's requests in flight
  app.server.on('connection', (socket: Socket) => {
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
