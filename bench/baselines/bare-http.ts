/**
 * What the bare baselines share: the services' JSON answer headers (content type, length,
 * CORS, X-Request-Id), and how they listen, announce their port like the services and stop on SIGTERM.
 */
import { randomUUID } from 'node:crypto';
import { createServer, type RequestListener, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export function sendJson(response: ServerResponse, status: number, body: string | Buffer): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'access-control-allow-origin': '*',
    // Every service answers with one: the client's (well formed) or a new UUID. Without it the
    // baseline would not send the services' bytes, and the header is a large part of a small answer's cost.
    'x-request-id': response.req.headers['x-request-id'] ?? randomUUID(),
  });
  response.end(body);
}

/** Listens on PORT (default: any free port) and HOST, and announces the port as the services do: a JSON line with `port`. */
export function serve(label: string, handler: RequestListener): void {
  const server = createServer(handler);
  // The same keep-alive timeout as the services, longer than a proxy's upstream idle timeout.
  server.keepAliveTimeout = 72_000;
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
    const { port } = server.address() as AddressInfo;
    process.stdout.write(`${JSON.stringify({ port, msg: `${label} running on port ${port}` })}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}
