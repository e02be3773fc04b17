/**
 * A Node peer of the TypeScript proxy (issue 11): @fastify/http-proxy as its README shows it,
 * a Fastify app registering the plugin with `upstream` (BACKEND_URL) and prefix '/', so every
 * path is relayed, with the plugin's defaults (@fastify/reply-from's undici pool). Announces
 * its port as the other baselines do.
 */
import fastifyHttpProxy from '@fastify/http-proxy';
import Fastify from 'fastify';
import type { AddressInfo } from 'node:net';

const app = Fastify();
await app.register(fastifyHttpProxy, { upstream: process.env.BACKEND_URL ?? 'http://127.0.0.1:5000', prefix: '/' });
await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
const { port } = app.server.address() as AddressInfo;
process.stdout.write(`${JSON.stringify({ port, msg: `@fastify/http-proxy running on port ${port}` })}\n`);
process.once('SIGTERM', () => process.exit(0));
