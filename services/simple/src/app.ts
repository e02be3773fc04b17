import { hostname } from 'node:os';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createServer, healthPlugin, labelUnrouted, readyPlugin, sendUnchecked, type App, type Logger, type RawHandler } from '@svc/kit';
import { services } from '@svc/manifest';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';

export interface SimpleAppOptions {
  logger: Logger | false;
  /** Reported by /health: the run mode (NODE_ENV). */
  environment: string;
  /** Count requests and serve GET /metrics; default true (createServer's `metrics`). */
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

/** The static users of variant A, exactly as the original served them, serialized once. */
const usersJson = JSON.stringify([
  { id: 1, name: 'John Doe', email: 'john@example.com' },
  { id: 2, name: 'Jane Smith', email: 'jane@example.com' },
] satisfies Static<typeof StaticUsers>);

const jsonType = 'application/json; charset=utf-8';

/** What GET / and GET /api/users answer, made where they are typed: the routes and DirectAnswers both send these. */
function greetingJson(host: string): string {
  return JSON.stringify({ message: 'Hello from Docker!', timestamp: new Date().toISOString(), hostname: host } satisfies Static<
    typeof Greeting
  >);
}

// Plain handlers that send and return nothing: no work here waits, and an async handler (a promise
// per request) or a returned reply (awaited as a thenable) would cost every request for nothing.
const greetingRoutes: FastifyPluginCallbackTypebox<{ host: string }> = (app, { host }, done) => {
  app.get('/', { schema: { summary: 'Greeting', response: { 200: Greeting } } }, (_request, reply) => {
    sendUnchecked(reply.type(jsonType), greetingJson(host)); // typed where it is serialized
  });
  done();
};

const userRoutes: FastifyPluginCallbackTypebox = (app, _options, done) => {
  const schema = { summary: 'The two static users', tags: ['users'], response: { 200: StaticUsers } };
  app.get('/api/users', { schema }, (_request, reply) => {
    sendUnchecked(reply.type(jsonType), usersJson); // typed where it is serialized
  });
  done();
};

/**
 * A's three GET routes answered on Node's own request and response, before Fastify makes its request
 * and reply objects and routes: the same bodies as the routes (which inject() and every other
 * method and path reach), labelled as they would be (request id, metrics, span). While closing
 * (Fastify's 503) or with request logging on (Fastify writes the lines), Fastify answers them too.
 */
class DirectAnswers {
  closing = false;
  private readonly labels = new Map<string, RawHandler>();
  constructor(
    private readonly bodies: ReadonlyMap<string, () => string>,
    private readonly app: () => App,
  ) {}

  wrap(routed: RawHandler): RawHandler {
    return (request: IncomingMessage, response: ServerResponse) => {
      const path = request.url ?? '';
      const body = request.method === 'GET' && !this.closing ? this.bodies.get(path) : undefined;
      if (body === undefined) return routed(request, response);
      let label = this.labels.get(path);
      // Made at the first request: the app, its metrics and tracer are known by then.
      if (label === undefined) this.labels.set(path, (label = labelUnrouted(this.app(), path)));
      label(request, response);
      const text = body();
      response.writeHead(200, { 'content-type': jsonType, 'content-length': Buffer.byteLength(text) });
      response.end(text);
    };
  }
}

/** Variant A (spec 4.1): greeting, health with uptime and run mode, static users. */
export function createSimpleApp(options: SimpleAppOptions): App {
  // Read once: a process (container) keeps its host name for life.
  const host = hostname();
  const health = (): Static<typeof Health> => ({ status: 'healthy', uptime: process.uptime(), environment: options.environment });
  const bodies = new Map([
    ['/', () => greetingJson(host)],
    ['/health', () => JSON.stringify(health())], // as healthPlugin serializes a report that changes every request
    ['/api/users', () => usersJson],
  ]);
  const direct = new DirectAnswers(bodies, () => app);
  const app: App = createServer({
    logger: options.logger,
    api: { title: 'simple', description: services.simple.summary },
    metrics: options.metrics !== false,
    ...(options.logger !== false && options.logger.isLevelEnabled('debug') ? {} : { wrapRequests: (routed) => direct.wrap(routed) }),
  });
  app.addHook('preClose', async () => {
    direct.closing = true;
  });
  void app.register(greetingRoutes, { host });
  void app.register(healthPlugin({ schema: Health, report: health, changesEveryRequest: true }));
  void app.register(readyPlugin()); // nothing to wait for: ready whenever it serves
  void app.register(userRoutes);
  return app;
}
