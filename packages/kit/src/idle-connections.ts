import type { Server, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * Closes, when the server starts closing, every connection with no response in progress. Node counts
 * a connection that has sent nothing yet, or part of its next request's head, as active, so
 * closeIdleConnections() leaves it open, and close() stops the timer that would have ended it: one
 * idle pre-connected client kept close() waiting forever. In-flight requests still finish.
 */
export function closeIdleConnectionsOnClose(server: Server): () => void {
  /** Each open connection's response in progress, or its last one. */
  const lastResponse = new Map<Socket, ServerResponse | undefined>();
  server.on('connection', (socket: Socket) => {
    lastResponse.set(socket, undefined);
    socket.once('close', () => lastResponse.delete(socket));
  });
  server.on('request', (request, response) => {
    if (lastResponse.has(request.socket)) lastResponse.set(request.socket, response);
  });
  return () => {
    for (const [socket, response] of lastResponse) {
      if (response === undefined || response.writableFinished) socket.destroy();
    }
  };
}
