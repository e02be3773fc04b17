/**
 * A Node peer of the TypeScript proxy (issue 11): node-http-proxy as its README shows it, a
 * proxy server on node:http relaying every request to BACKEND_URL, here through a keep-alive
 * agent (without one, http-proxy opens a connection per request and sends `Connection: close`).
 * Its error handler answers 502 as the proxy does; without one, a failed upstream request
 * would throw and end the process.
 */
import { sendJson, serve } from './bare-http.js';
import { Agent } from 'node:http';
import httpProxy from 'http-proxy';

const proxy = httpProxy.createProxyServer({
  target: process.env.BACKEND_URL ?? 'http://127.0.0.1:5000',
  // As many upstream connections as the bare relay's pool, for 50 client connections.
  agent: new Agent({ keepAlive: true, maxSockets: 64 }),
});
proxy.on('error', (_error, _request, response) => {
  // For HTTP requests the third argument is the client's response (a socket only for upgrades).
  if ('writeHead' in response && !response.headersSent) sendJson(response, 502, '{"error":"Bad gateway"}');
});

serve('http-proxy', (request, response) => proxy.web(request, response));
