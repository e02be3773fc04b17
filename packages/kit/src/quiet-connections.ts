import type { Server } from 'node:http';
import type { Socket } from 'node:net';

/** What Node sets on a socket while a response is being written on it (see closeIdleConnections). */
interface ServedSocket extends Socket {
  _httpMessage?: { finished: boolean } | null;
}

/**
 * Closes, when the server starts closing, every connection with no response in progress.
 * Node counts a connection that has sent nothing yet, or only part of its next request's head,
 * as active (its headers timer runs), so closeIdleConnections() leaves it open; and close()
 * stops the timer that would have ended it. One such client, an idle pre-connected socket or a
 * port scanner, kept close() waiting forever. Node's own test for "no response in progress"
 * (`socket._httpMessage`) is used, so pipelined and in-flight requests still finish;
 * packages/kit/test/server.test.ts fails if a Node release changes it.
 */
export function closeQuietConnectionsOnClose(server: Server): () => void {
  const sockets = new Set<ServedSocket>();
  server.on('connection', (socket: ServedSocket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  return () => {
    for (const socket of sockets) {
      const response = socket._httpMessage;
      if (response === undefined || response === null || response.finished) socket.destroy();
    }
  };
}
