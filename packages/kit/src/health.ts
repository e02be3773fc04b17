import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifySchema } from 'fastify';
import type { Static, TObject } from 'typebox';
import { servedUnderPressure } from './load-shedding.js';

export interface HealthOptions<Report extends TObject> {
  /** The answer's schema: types `report`, documents the route. */
  schema: Report;
  /** What the service reports; always answered 200 while the process serves (spec 2.3). */
  report: () => Static<Report> | Promise<Static<Report>>;
  /**
   * The report has a number new on every request (variant A's uptime): written by JSON.stringify, as
   * fast-json-stringify's `'' + n` kept each such string in V8's number cache, promoted to the old generation.
   */
  changesEveryRequest?: boolean;
}

/** GET /health, registered by every service with what it reports. */
export function healthPlugin<Report extends TObject>(options: HealthOptions<Report>): FastifyPluginCallbackTypebox {
  return (typed, _options, done) => {
    // TypeScript cannot follow the generic schema into the reply's type: the options type the report instead.
    const app = typed as unknown as FastifyInstance;
    const schema: FastifySchema = { summary: 'Health report', tags: ['health'], response: { 200: options.schema } };
    const route = {
      schema,
      // Liveness: a process that answers is alive, however loaded; /ready is shed with the rest.
      config: servedUnderPressure,
      ...(options.changesEveryRequest === true && { serializerCompiler: () => JSON.stringify }),
    };
    // Not async when the report is not: a promise per request is work a plain route need not do.
    app.get('/health', route, (_request, reply) => {
      const report = options.report();
      if (report instanceof Promise)
        void report.then(
          (value) => reply.send(value),
          (error: unknown) => reply.send(error),
        );
      else void reply.send(report);
    });
    done();
  };
}
