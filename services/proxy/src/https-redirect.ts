import type { IncomingMessage, ServerResponse } from 'node:http';
import type { App } from '@sample-services/kit/server';
import { refusal } from './client-request.js';
import { hostOf } from './headers.js';
import { requestTarget } from './request-target.js';

/** The upstream's health paths: probes on the plain port keep reaching them, as before HTTPS. */
const healthPaths = new Set(['/health', '/ready']);

/**
 * On the plain port beside HTTPS: every request but the health paths answers 308 (method and body kept by
 * the client) to the same host and path on the HTTPS port, as nginx.conf's plain server does; a request
 * the proxy would refuse is refused here too, so that a malformed Host never reaches a Location.
 */
export function redirectToHttps(app: App, httpsPort: number): void {
  const port = httpsPort === 443 ? '' : `:${httpsPort}`;
  app.addHook('onRequest', (request, reply, done) => {
    const raw = request.raw;
    const url = raw.url ?? '/';
    if (healthPaths.has(url.split('?', 1)[0] ?? '')) return done();
    try {
      const refused = refusal(raw);
      if (refused !== undefined) throw refused;
      const target = requestTarget(url, raw.headers.host);
      void reply
        .code(308)
        .header('location', `https://${hostOf(target.host)}${port}${target.path}`)
        .send();
    } catch (error) {
      void reply.send(error);
    }
  });
}

/**
 * Strict-Transport-Security on every answer of the HTTPS app: set on Node's response before Fastify routes
 * the request, so that answers before routing (a path that cannot be decoded) carry it too; the relay's
 * and Fastify's own headers are added to it.
 */
export function sendHsts(app: App, maxAge: number): void {
  const value = `max-age=${maxAge}`;
  app.server.prependListener('request', (_request: IncomingMessage, response: ServerResponse) => {
    response.setHeader('strict-transport-security', value);
  });
}
