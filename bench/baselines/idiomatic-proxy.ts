/**
 * The reverse proxy as a copier would write it with Fastify 5: @fastify/http-proxy relaying every
 * path to BACKEND_URL with the headers deploy/nginx/nginx.conf sets (Host as nginx's `$host`,
 * X-Real-IP, X-Forwarded-For with the client appended, X-Request-Id), request ids (X-Request-Id
 * read, else a new UUID, echoed on every answer), and prom-client's Counter and Histogram observed
 * in an onResponse hook, served on a port of their own (METRICS_PORT, default any free one) since
 * every path of the proxy's port belongs to its upstream, as the TypeScript proxy does. Issue 42
 * holds the proxy's CPU per request to a multiple of this one's. peer-fastify-http-proxy.ts is the
 * same plugin with its README's defaults alone.
 */
import { randomUUID } from 'node:crypto';
import fastifyHttpProxy from '@fastify/http-proxy';
import Fastify, { LogController } from 'fastify';
import { register } from 'prom-client';
import { addRequestIdsAndMetrics } from './copier-hooks.js';

const app = Fastify({
  logger: true,
  // The proxy writes no line per request at the info level (nor does nginx here: access_log off).
  logController: new LogController({ disableRequestLogging: true }),
  requestIdHeader: 'x-request-id',
  genReqId: () => randomUUID(),
});

addRequestIdsAndMetrics(app);

await app.register(fastifyHttpProxy, {
  upstream: process.env.BACKEND_URL ?? 'http://web:3000',
  prefix: '/',
  // The plugin's own line per relayed request ("fetching from remote server"), off as Fastify's are.
  disableRequestLogging: true,
  replyOptions: {
    rewriteRequestHeaders: (request, headers) => {
      const chain = request.headers['x-forwarded-for'];
      return {
        ...headers,
        host: request.hostname,
        'x-real-ip': request.ip,
        'x-forwarded-for': chain === undefined ? request.ip : `${String(chain)}, ${request.ip}`,
        'x-request-id': request.id,
      };
    },
  },
});

const metrics = Fastify();
metrics.get('/metrics', async (_request, reply) => reply.type(register.contentType).send(await register.metrics()));

const host = process.env.HOST ?? '0.0.0.0';
await metrics.listen({ port: Number(process.env.METRICS_PORT ?? 0), host });
const address = await app.listen({ port: Number(process.env.PORT ?? 80), host });
// The bench learns the port from a JSON line with `port`, as the services write it.
const port = Number(new URL(address).port);
app.log.info({ port }, `Proxy running on port ${port}`);

process.once('SIGTERM', () => void Promise.all([app.close(), metrics.close()]).then(() => process.exit(0)));
