/**
 * A bare relay: node:http taking each request's path from BACKEND_URL through the same client
 * as our services (an undici pool of keep-alive connections) and relaying status and body.
 * The baseline of the C frontend (with LOCAL_HEALTH set it answers /health itself, as the
 * frontend does) and of the proxy (everything relayed). GET only: what the scenarios send.
 */
import { createServer, type ServerResponse } from 'node:http';
import { Pool } from 'undici';

const backend = new Pool(process.env.BACKEND_URL ?? 'http://127.0.0.1:5000', { connections: 64 });
const localHealth = process.env.LOCAL_HEALTH !== undefined;

function send(response: ServerResponse, status: number, body: string): void {
  response.writeHead(status, {
    'content-type': 'application/json; charset=utf-8',
    'content-length': Buffer.byteLength(body),
    'access-control-allow-origin': '*',
  });
  response.end(body);
}

const server = createServer((request, response) => {
  if (localHealth && request.url === '/health') return send(response, 200, '{"status":"healthy","service":"frontend"}');
  backend
    .request({ method: 'GET', path: request.url ?? '/' })
    .then(async ({ statusCode, body }) => send(response, statusCode, await body.text()))
    .catch(() => send(response, 502, '{"error":"Bad gateway"}'));
});
server.keepAliveTimeout = 72_000;
server.listen(Number(process.env.PORT ?? 0), process.env.HOST ?? '127.0.0.1', () => {
  const address = server.address();
  process.stdout.write(`Bare relay running on port ${typeof address === 'object' && address !== null ? address.port : ''}\n`);
});
process.once('SIGTERM', () => process.exit(0));
