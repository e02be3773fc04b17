import type { IncomingMessage, Server } from 'node:http';
import type { Socket } from 'node:net';

/** Connections the HTTP server accepted on its own listener (PROBE_PORT, PROBE_SOCKET), never a public client's. */
const probeConnections = new WeakSet<Socket>();

/** Marks each connection the server accepts itself; `fromPublicPort` says which ones the public port's admission handed over. */
export function markProbeConnections(server: Server, fromPublicPort: (socket: Socket) => boolean): void {
  server.on('connection', (socket: Socket) => {
    if (!fromPublicPort(socket)) probeConnections.add(socket);
  });
}

/**
 * Whether a request came in on the service's probe listener: only the container itself (or the
 * kubelet) reaches it. False for every public request, and for requests injected in tests.
 */
export const arrivedOnProbeListener = (request: IncomingMessage): boolean => probeConnections.has(request.socket);
