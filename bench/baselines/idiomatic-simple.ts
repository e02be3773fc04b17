/**
 * Variant A as a copier would write it with Fastify 5 from the plugins' READMEs, without the kit:
 * the three routes with TypeBox response schemas, @fastify/cors for every origin, request ids
 * (X-Request-Id read, else a new UUID, and echoed on every answer), prom-client's Counter and
 * Histogram observed in an onResponse hook, and GET /metrics. Plain Fastify: no V8 flag, no
 * hand-written serialization. The baseline of variant A's CPU per request, RSS and start-up
 * (issue 42), and of every service's start-up.
 */
import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import cors from '@fastify/cors';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import Fastify, { LogController } from 'fastify';
import { register } from 'prom-client';
import { addRequestIdsAndMetrics } from './copier-hooks.js';
import { Type } from 'typebox';

const app = Fastify({
  logger: true,
  // The service writes no line per request at the info level; a line per request here would make the
  // baseline pay for a write the service does not make.
  logController: new LogController({ disableRequestLogging: true }),
  requestIdHeader: 'x-request-id',
  genReqId: () => randomUUID(),
}).withTypeProvider<TypeBoxTypeProvider>();

await app.register(cors, { origin: '*' });

addRequestIdsAndMetrics(app);

const host = hostname();
const users = [
  { id: 1, name: 'John Doe', email: 'john@example.com' },
  { id: 2, name: 'Jane Smith', email: 'jane@example.com' },
];

const Greeting = Type.Object({ message: Type.String(), timestamp: Type.String(), hostname: Type.String() });
const Health = Type.Object({ status: Type.String(), uptime: Type.Number(), environment: Type.String() });
const Users = Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() }));

app.get('/', { schema: { response: { 200: Greeting } } }, async () => ({
  message: 'Hello from Docker!',
  timestamp: new Date().toISOString(),
  hostname: host,
}));

app.get('/health', { schema: { response: { 200: Health } } }, async () => ({
  status: 'healthy',
  uptime: process.uptime(),
  environment: process.env.NODE_ENV ?? 'development',
}));

app.get('/api/users', { schema: { response: { 200: Users } } }, async () => users);

app.get('/metrics', async (_request, reply) => reply.type(register.contentType).send(await register.metrics()));

const address = await app.listen({ port: Number(process.env.PORT ?? 3000), host: process.env.HOST ?? '0.0.0.0' });
// The bench learns the port from a JSON line with `port`, as the services write it.
app.log.info({ port: Number(new URL(address).port) }, `Server running on port ${new URL(address).port}`);

process.once('SIGTERM', () => void app.close().then(() => process.exit(0)));
