import corsPlugin from '@fastify/cors';
import fp from 'fastify-plugin';

/**
 * Cross-origin access for every origin on every answer, errors included, and preflights granted with
 * the methods the services take and the headers asked for (@fastify/cors). Not strict: an OPTIONS
 * without the preflight headers gets the same 204 rather than a text/plain 400.
 */
export const cors = fp(async (app) => {
  await app.register(corsPlugin, {
    origin: '*',
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    strictPreflight: false,
    // Its OPTIONS route in the document (openapi.ts), as every route is.
    hideOptionsRoute: false,
  });
});
