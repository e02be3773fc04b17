/**
 * A bare relay: node:http taking each request's path from BACKEND_URL through the same client
 * as our services (an undici pool of keep-alive connections) and relaying status and body.
 * The baseline of the C frontend (with LOCAL_HEALTH set it answers /health itself, as the
 * frontend does) and of the proxy (everything relayed). GET only: what the scenarios send.
 */
import { sendJson, serve } from './bare-http.js';
import { Pool } from 'undici';

const backend = new Pool(process.env.BACKEND_URL ?? 'http://127.0.0.1:5000', { connections: 64 });
const localHealth = process.env.LOCAL_HEALTH !== undefined;

serve('Bare relay', (request, response) => {
  if (localHealth && request.url === '/health') return sendJson(response, 200, '{"status":"healthy","service":"frontend"}');
  backend
    .request({ method: 'GET', path: request.url ?? '/' })
    .then(async ({ statusCode, body }) => sendJson(response, statusCode, await body.text()))
    .catch(() => sendJson(response, 502, '{"error":"Bad gateway"}'));
});
