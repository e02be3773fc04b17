import { once } from 'node:events';
import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** A listening test server that can go down (connections refused, open ones dropped) and come back. */
export interface SwitchableServer {
  /** The port it listens on, the same after comeUp(). */
  port: number;
  /** TCP connections opened to it so far (keep-alive reuse opens none). */
  readonly connections: number;
  /** TCP connections open now. */
  readonly open: number;
  /** Stops listening and drops every connection: connecting now fails with ECONNREFUSED. */
  goDown: () => Promise<void>;
  /** Listens again on the same address and port. */
  comeUp: () => Promise<void>;
}

/** Starts `server` on `address` and `port` (0: any free one), counting and tracking its connections. */
export async function listenSwitchable(server: Server, address: string, port = 0): Promise<SwitchableServer> {
  let connections = 0;
  const sockets = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    connections += 1;
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.listen(port, address);
  await once(server, 'listening');
  const bound = (server.address() as AddressInfo).port;
  return {
    port: bound,
    get connections() {
      return connections;
    },
    get open() {
      return sockets.size;
    },
    goDown: async () => {
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    comeUp: async () => {
      server.listen(bound, address);
      await once(server, 'listening');
    },
  };
}
