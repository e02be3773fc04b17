/**
 * What createServer does for every request beyond Fastify's own: the request's logger, the response
 * class's headers, the health report's serializer, and a service's wrapper of the request listener.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { pino } from 'pino';
import { Type } from 'typebox';
import { answerError, createServer, healthPlugin, HttpError, labelUnrouted, metricsOf, type App, type RawHandler } from '../src/index.js';

const api = { title: 'test', description: 'requests' };
let app: App;

afterEach(async () => {
  await app.close();
});

const listen = async (): Promise<string> => `http://127.0.0.1:${(await app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop()}`;

describe('createServer, per request', () => {
  it("a request's logger is a whole pino logger: its lines carry the request id, and its children (child, bindings, level) work", async () => {
    type Line = { reqId?: string; msg?: string; step?: number };
    const lines: Line[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Line) });
    app = createServer({ logger, api });
    const routes: FastifyPluginCallbackTypebox = (plugin, _options, done) => {
      plugin.get('/warns', (request, reply) => {
        request.log.debug('not written at info');
        request.log.warn('something to say');
        const child = request.log.child({ step: 2 });
        child.warn('from a child');
        void reply.send({ level: child.level, bindings: (child as unknown as pino.Logger).bindings() });
      });
      done();
    };
    void app.register(routes);
    const baseUrl = await listen();
    // Over a socket as well as through inject(): the request's logger is the same either way.
    for (const answer of [
      (await app.inject({ method: 'GET', url: '/warns', headers: { 'x-request-id': 'trace-7' } })).json(),
      await (await fetch(`${baseUrl}/warns`, { headers: { 'x-request-id': 'trace-8' } })).json(),
    ]) {
      expect(answer).toEqual({ level: 'info', bindings: expect.objectContaining({ step: 2 }) as unknown });
    }
    expect(lines.filter((line) => line.reqId !== undefined).map(({ reqId, msg, step }) => ({ reqId, msg, step }))).toEqual([
      { reqId: 'trace-7', msg: 'something to say', step: undefined },
      { reqId: 'trace-7', msg: 'from a child', step: 2 },
      { reqId: 'trace-8', msg: 'something to say', step: undefined },
      { reqId: 'trace-8', msg: 'from a child', step: 2 },
    ]);
  });

  it('the response class adds CORS to every head written, and Connection: close once closing', async () => {
    app = createServer({ logger: false, api });
    // Hooks run in order: when this one runs, the kit's own preClose has marked the server closing.
    let closing: () => void = () => undefined;
    const closingStarted = new Promise<void>((resolve) => (closing = resolve));
    app.addHook('preClose', async () => closing());
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    app.get('/held', async () => {
      await held;
      return { ok: true };
    });
    const baseUrl = await listen();
    const res404 = await fetch(`${baseUrl}/nowhere`);
    expect(res404.headers.get('access-control-allow-origin')).toBe('*');
    const inFlight = fetch(`${baseUrl}/held`);
    await new Promise((resolve) => setTimeout(resolve, 100));
    const closed = app.close();
    await closingStarted;
    release();
    const res = await inFlight;
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('connection')).toBe('close');
    await closed;
    app = createServer({ logger: false, api }); // afterEach closes this one
  });

  it('a report that changes on every request is written by JSON.stringify, not by its schema', async () => {
    app = createServer({ logger: false, api });
    const schema = Type.Object({ uptime: Type.Number() });
    // A number schema's serializer would write "5" as 5; JSON.stringify keeps the string.
    const report = () => ({ uptime: '5' as unknown as number });
    void app.register(healthPlugin({ schema, report, changesEveryRequest: true }));
    expect((await app.inject({ method: 'GET', url: '/health' })).body).toBe('{"uptime":"5"}');
  });

  /** An app whose wrapper answers every request raw (labelled as `/*`) unless `routedWhen` says. */
  function wrappedApp(logger: Parameters<typeof createServer>[0]['logger'], handler: RawHandler, routedWhen = () => false): App {
    let label: RawHandler | undefined;
    const server: App = createServer({
      logger,
      api,
      optimizeEmptyRequests: true,
      wrapRequests: (routed) => (request, response) => {
        if (routedWhen()) return routed(request, response);
        (label ??= labelUnrouted(server, '/*'))(request, response);
        handler(request, response);
      },
    });
    return server;
  }

  it("with optimizeEmptyRequests, a request without a body comes already ended; without it, Fastify's parsers still get their 'end'", async () => {
    const ended: boolean[] = [];
    app = wrappedApp(false, (request, response) => {
      ended.push(request.readableEnded);
      response.end();
    });
    let base = await listen();
    await (await fetch(`${base}/a`)).text();
    await (await fetch(`${base}/a`, { method: 'POST', body: 'x' })).text();
    expect(ended).toEqual([true, false]);
    await app.close();

    // A Content-Type and no body: Fastify's JSON parser waits for the request's 'end'.
    app = createServer({ logger: false, api });
    app.delete('/thing', (request, reply) => reply.send({ body: request.body ?? null }));
    base = await listen();
    const deleted = await fetch(`${base}/thing`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    expect([deleted.status, await deleted.text()]).toEqual([400, '{"error":"Request body is empty but content-type is application/json"}']);
  });

  describe('wrapRequests', () => {
    let hooksRun = 0;
    /** An app that answers raw with a flat head naming an X-Request-Id of its own, and routes the same path. */
    function rawApp(routedWhen?: () => boolean): App {
      hooksRun = 0;
      const server = wrappedApp(
        false,
        (request, response) => {
          response.writeHead(200, ['content-type', 'text/plain', 'X-Request-Id', 'from-upstream']);
          response.end(`raw ${request.url}`);
        },
        routedWhen,
      );
      server.addHook('onRequest', async () => void hooksRun++);
      server.get('/*', (_request, reply) => reply.type('text/plain').send('routed'));
      return server;
    }

    it('takes a request before Fastify: no hook runs, its id and CORS are in the head once, counted under its label', async () => {
      app = rawApp();
      const baseUrl = await listen();
      const res = await fetch(`${baseUrl}/a/b?c`, { headers: { 'x-request-id': 'trace-9' } });
      expect(await res.text()).toBe('raw /a/b?c');
      expect(res.headers.get('x-request-id')).toBe('trace-9');
      expect(res.headers.get('access-control-allow-origin')).toBe('*');
      const fresh = await fetch(`${baseUrl}/d`);
      expect(fresh.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
      await fresh.text();
      expect(hooksRun).toBe(0);
      expect(metricsOf(app).requests.render()).toContain('http_requests_total{method="GET",route="/*",status_code="200"} 2');
    });

    it("hands requests to Fastify's routing when the wrapper says so, and inject()'s never reach it", async () => {
      app = rawApp(() => true);
      const baseUrl = await listen();
      expect(await (await fetch(`${baseUrl}/a`)).text()).toBe('routed');
      expect((await app.inject({ method: 'GET', url: '/a' })).body).toBe('routed');
      expect(hooksRun).toBe(2);
    });
  });

  it("answerError writes the error handler's answer on a raw response: its status and message, a 5xx one logged with the request id", async () => {
    const lines: { level: number; reqId?: string; msg?: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as (typeof lines)[number]) });
    const errors = [
      new HttpError(502, 'Bad gateway: upstream unavailable'),
      new HttpError(413, 'Request body is too large'),
      new Error('secret detail'),
      // Fastify's own 4xx errors are answered as its error handler answers them.
      Object.assign(new Error('FST_ERR_CTP_BODY_TOO_LARGE'), { statusCode: 413, code: 'FST_ERR_CTP_BODY_TOO_LARGE' }),
      new HttpError(503, 'Upstream busy'),
    ];
    app = wrappedApp(false, (request, response) => answerError(response, errors[Number(request.url?.slice(1))], logger));
    const baseUrl = await listen();
    const answers = [];
    for (const index of [0, 1, 2, 3, 4]) {
      const res = await fetch(`${baseUrl}/${index}`, { headers: { 'x-request-id': `id-${index}` } });
      answers.push([
        res.status,
        res.headers.get('content-type'),
        res.headers.get('x-request-id'),
        res.headers.get('retry-after'),
        await res.json(),
      ]);
    }
    expect(answers).toEqual([
      [502, 'application/json; charset=utf-8', 'id-0', null, { error: 'Bad gateway: upstream unavailable' }],
      [413, 'application/json; charset=utf-8', 'id-1', null, { error: 'Request body is too large' }],
      [500, 'application/json; charset=utf-8', 'id-2', null, { error: 'Internal server error' }],
      [413, 'application/json; charset=utf-8', 'id-3', null, { error: 'Request body is too large' }],
      [503, 'application/json; charset=utf-8', 'id-4', '1', { error: 'Upstream busy' }],
    ]);
    expect(lines.map(({ level, reqId, msg }) => ({ level, reqId, msg }))).toEqual([
      { level: 40, reqId: 'id-0', msg: 'Bad gateway: upstream unavailable' },
      { level: 50, reqId: 'id-2', msg: 'request failed' },
      { level: 40, reqId: 'id-4', msg: 'Upstream busy' },
    ]);
  });
});
