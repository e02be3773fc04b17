/**
 * The baseline of the C frontend: bare node:http fetching GET /api/users from BACKEND_URL
 * through the same client (an undici pool of keep-alive connections) and relaying the body.
 */
import { createServer, type ServerResponse } from 'node:http';
import { Pool } from 'undici';

const backend = new Pool(process.env.BACKEND_URL ?? 'http://127.0.0.1:5000', { connections: 64 });

function send(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'access-control-allow-origin': '*',
  });
  response.end(body);
}

const server = createServer((request, response) => {
  if (request.url === '/health') return send(response, 200, '{"status":"healthy","service":"frontend"}');
  if (request.url !== '/api/users') return send(response, 404, '{"error":"Not found"}');
  backend
    .request({ method: 'GET', path: '/api/users' })
    .then(({ body }) => body.text())
    .then(
      (text) => send(response, 200, text),
      () => send(response, 500, '{"error":"Failed to fetch users"}'),
    );
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`Bare forwarding server running on port ${typeof address === 'object' && address !== null ? address.port : ''}\n`);
});
process.once('SIGTERM', () => process.exit(0));
