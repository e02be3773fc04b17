/**
 * What the bare baselines share: the services' JSON answer headers (content type, length,
 * CORS), and how they listen, announce their port like the services and stop on SIGTERM.
 */
import { createServer, type RequestListener, type ServerResponse } from 'node:http';

export function sendJson(response: ServerResponse, status: number, body: string | Buffer): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'access-control-allow-origin': '*',
  });
  response.end(body);
}

/** Listens on PORT (default: any free port) and HOST, and prints `<label> running on port <port>`. */
export function serve(label: string, handler: RequestListener): void {
  const server = createServer(handler);
  // The same keep-alive timeout as the services, longer than a proxy's upstream idle timeout.
  server.keepAliveTimeout = 72_000;
  server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
    const address = server.address();
    process.stdout.write(`${label} running on port ${typeof address === 'object' && address !== null ? address.port : ''}\n`);
  });
  process.once('SIGTERM', () => process.exit(0));
}
