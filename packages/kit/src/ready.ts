import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errorAnswer } from './schemas.js';

/** Whether the service can take requests now: `true`, or what it waits for (e.g. `the database is unreachable`). */
export type ReadyCheck = () => true | string | Promise<true | string>;

export interface ReadyOptions {
  /** What the service needs besides itself; without one it is ready whenever it serves. A rejection is not ready. */
  check?: ReadyCheck;
}

const schema = {
  summary: 'Readiness: whether to send this instance requests (an orchestrator probe)',
  description:
    'Unlike /health, which answers 200 while the process serves, this answers 503 while the service cannot do its ' +
    'work (a dependency such as the database is unreachable) and once it is shutting down.',
  tags: ['health'],
  response: {
    200: Type.Object({ status: Type.Literal('ready') }, { examples: [{ status: 'ready' }] }),
    503: errorAnswer('Not ready: shutting down, or a dependency (the database) is unreachable', 'Not ready: the database is unreachable'),
  },
};

/**
 * GET /ready for readiness probes: 200 `{"status":"ready"}` when the check passes, 503 `{"error":"Not ready: ..."}`
 * when not, and from the moment the server starts closing, also for a check still running then.
 */
export function readyPlugin({ check }: ReadyOptions = {}): FastifyPluginCallbackTypebox {
  return (app, _options, done) => {
    let closing = false;
    // preClose hooks run at the start of close(), before in-flight requests finish.
    app.addHook('preClose', (hookDone) => {
      closing = true;
      hookDone();
    });
    app.get('/ready', { schema }, async (request, reply) => {
      let state: true | string = 'shutting down';
      if (!closing) {
        try {
          state = check === undefined ? true : await check();
        } catch (error) {
          request.log.warn({ err: error }, 'readiness check failed');
          state = 'the readiness check failed';
        }
      }
      if (closing) state = 'shutting down';
      if (state === true) return { status: 'ready' as const };
      return reply.code(503).send({ error: `Not ready: ${state}` });
    });
    done();
  };
}
