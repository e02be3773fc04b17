/**
 * The ceiling for variant A: bare node:http answering the same routes with the same bytes
 * and headers (JSON content type, CORS), doing only the work each answer needs: the static
 * users are serialized once, the greeting and the health report per request.
 * Also serves as the proxy scenario's upstream. PORT as the services read it.
 */
import { sendJson, serve } from './bare-http.js';
import { hostname } from 'node:os';

const host = hostname();
// Serialized once, and kept a string: Node then writes head and body as one chunk (a Buffer
// body goes out as a second one, about 2% slower).
const usersBody = JSON.stringify([
  { id: 1, name: 'John Doe', email: 'john@example.com' },
  { id: 2, name: 'Jane Smith', email: 'jane@example.com' },
]);

serve('Bare server', (request, response) => {
  if (request.url === '/api/users') return sendJson(response, 200, usersBody);
  if (request.url === '/') {
    return sendJson(response, 200, JSON.stringify({ message: 'Hello from Docker!', timestamp: new Date().toISOString(), hostname: host }));
  }
  if (request.url === '/health') {
    return sendJson(response, 200, JSON.stringify({ status: 'healthy', uptime: process.uptime(), environment: process.env.NODE_ENV }));
  }
  sendJson(response, 404, '{"error":"Not found"}');
});
