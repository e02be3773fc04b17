/**
 * The ceiling for variant A: bare node:http answering the same routes with the same bytes
 * and headers (JSON content type, CORS), doing only the work each answer needs: the static
 * users are serialized once, the greeting and the health report per request.
 * Also serves as the proxy scenario's upstream. PORT as the services read it.
 */
import { createServer, type ServerResponse } from 'node:http';
import { hostname } from 'node:os';

const host = hostname();
const usersBody = Buffer.from(
  JSON.stringify([
    { id: 1, name: 'John Doe', email: 'john@example.com' },
    { id: 2, name: 'Jane Smith', email: 'jane@example.com' },
  ]),
);

function send(response: ServerResponse, status: number, body: string | Buffer): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'access-control-allow-origin': '*',
  });
  response.end(body);
}

const server = createServer((request, response) => {
  if (request.url === '/api/users') return send(response, 200, usersBody);
  if (request.url === '/') {
    return send(response, 200, JSON.stringify({ message: 'Hello from Docker!', timestamp: new Date().toISOString(), hostname: host }));
  }
  if (request.url === '/health') {
    return send(response, 200, JSON.stringify({ status: 'healthy', uptime: process.uptime(), environment: process.env.NODE_ENV }));
  }
  send(response, 404, '{"error":"Not found"}');
});
// The same keep-alive timeout as the services, longer than a proxy's upstream idle timeout.
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`Bare server running on port ${typeof address === 'object' && address !== null ? address.port : ''}\n`);
});
process.once('SIGTERM', () => process.exit(0));
