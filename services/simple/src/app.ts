import { hostname } from 'node:os';
import { apiDocs } from '@sample-services/kit/openapi';
import { cors } from '@sample-services/kit/cors';
import { countRequests, metricsRoute } from '@sample-services/kit/metrics';
import { createServer, type App } from '@sample-services/kit/server';
import { healthPlugin } from '@sample-services/kit/health';
import { loadShedding } from '@sample-services/kit/load-shedding';
import { readyPlugin } from '@sample-services/kit/ready';
import type { Logger } from '@sample-services/kit/logger';
import { service } from './service.js';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';

export interface SimpleAppOptions {
  logger: Logger | false;
  /** Reported by /health: the run mode (NODE_ENV). */
  environment: string;
  /** Count requests and serve GET /metrics; default true. */
  metrics?: boolean;
}

const Greeting = Type.Object(
  {
    message: Type.String(),
    timestamp: Type.String({ description: 'ISO 8601, now' }),
    hostname: Type.String({ description: 'The host (container) that answered' }),
  },
  { examples: [{ message: 'Hello from Docker!', timestamp: '2026-11-22T10:15:30.123Z', hostname: 'web-1' }] },
);

const Health = Type.Object(
  {
    status: Type.Literal('healthy'),
    uptime: Type.Number({ description: 'Process uptime in seconds' }),
    environment: Type.String({ description: 'NODE_ENV' }),
  },
  { examples: [{ status: 'healthy', uptime: 12.5, environment: 'production' }] },
);

const StaticUsers = Type.Array(Type.Object({ id: Type.Integer(), name: Type.String(), email: Type.String() }));

/** The static users of variant A, exactly as the original served them. */
const users: Static<typeof StaticUsers> = [
  { id: 1, name: 'John Doe', email: 'john@example.com' },
  { id: 2, name: 'Jane Smith', email: 'jane@example.com' },
];

const greetingRoutes: FastifyPluginCallbackTypebox<{ host: string }> = (app, { host }, done) => {
  app.get('/', { schema: { summary: 'Greeting', response: { 200: Greeting } } }, () => ({
    message: 'Hello from Docker!',
    timestamp: new Date().toISOString(),
    hostname: host,
  }));
  done();
};

const userRoutes: FastifyPluginCallbackTypebox = (app, _options, done) => {
  const schema = { summary: 'The two static users', tags: ['users'], response: { 200: StaticUsers } };
  app.get('/api/users', { schema }, () => users);
  done();
};

/** Variant A (spec 4.1): greeting, health with uptime and run mode, static users. */
export function createSimpleApp(options: SimpleAppOptions): App {
  const app = createServer({ logger: options.logger, api: { title: 'simple', description: service.summary } });
  void app.register(cors).register(apiDocs).register(loadShedding);
  // METRICS=off: nothing counted and no GET /metrics, for an operator who does not scrape it.
  if (options.metrics !== false) void app.register(countRequests).register(metricsRoute);
  // Read once: a process (container) keeps its host name for life.
  void app.register(greetingRoutes, { host: hostname() });
  void app.register(
    healthPlugin({
      schema: Health,
      report: () => ({ status: 'healthy' as const, uptime: process.uptime(), environment: options.environment }),
      changesEveryRequest: true,
    }),
  );
  void app.register(readyPlugin()); // nothing to wait for: ready whenever it serves
  void app.register(userRoutes);
  return app;
}
