/**
 * What createServer does for every request beyond Fastify's own: the request's logger, the headers
 * every answer carries, the health report's serializer, and the answers to requests Node refuses.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { pino } from 'pino';
import { Type } from 'typebox';
import { sendRaw } from '@sample-services/testing/http-request';
import { answerError, createServer, type App } from '../src/server.js';
import { cors } from '../src/cors.js';
import { healthPlugin } from '../src/health.js';
import { HttpError } from '../src/errors.js';

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

  it('every answer carries CORS, and Connection: close once closing', async () => {
    app = createServer({ logger: false, api });
    void app.register(cors);
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

  it("a request with a Content-Type and no body reaches Fastify's JSON parser, which answers 400", async () => {
    app = createServer({ logger: false, api });
    app.delete('/thing', (request, reply) => reply.send({ body: request.body ?? null }));
    const base = await listen();
    const deleted = await fetch(`${base}/thing`, { method: 'DELETE', headers: { 'content-type': 'application/json' } });
    expect([deleted.status, await deleted.text()]).toEqual([400, '{"error":"Request body is empty but content-type is application/json"}']);
  });

  it('serves a request whose Expect it does not know as any other, as nginx does, not with an empty 417', async () => {
    app = createServer({ logger: false, api });
    app.get('/thing', (_request, reply) => reply.send({ ok: true }));
    const answer = await sendRaw(await listen(), 'GET /thing HTTP/1.1\r\nHost: x\r\nExpect: 100-banana\r\nX-Request-Id: expect-1');
    expect(answer).toMatch(/^HTTP\/1\.1 200 /);
    expect(answer.toLowerCase()).toContain('x-request-id: expect-1');
    expect(answer.endsWith('{"ok":true}')).toBe(true);
  });

  it.each([
    ['a malformed request line', 'GET /a b c HTTP/1.1\r\nHost: x', 400, 'Bad request: the request could not be parsed'],
    ['a head over 16 KiB', `GET / HTTP/1.1\r\nHost: x\r\nX-Big: ${'a'.repeat(40_000)}`, 431, 'Request header fields too large'],
  ])(
    'answers %s, which Node refuses before Fastify routes it, with the JSON error and an X-Request-Id',
    async (_name, head, status, error) => {
      app = createServer({ logger: false, api });
      const answer = await sendRaw(await listen(), head);
      const [statusLine = '', ...lines] = answer.split('\r\n\r\n', 1)[0]?.split('\r\n') ?? [];
      expect(statusLine).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
      expect(lines).toContain('Content-Type: application/json; charset=utf-8');
      expect(lines.find((line) => line.startsWith('x-request-id: '))).toMatch(/^x-request-id: [0-9a-f-]{36}$/);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error });
    },
  );

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
    app = createServer({ logger: false, api });
    app.get('/:index', (request, reply) => {
      reply.hijack();
      answerError(reply.raw, errors[Number((request.params as { index: string }).index)], logger, request.id);
    });
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
