/**
 * One test per speed trick of fast-paths.ts: each fails if a Fastify or pino release silently
 * undoes the trick (the bench would only show it as a slower run).
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { pino } from 'pino';
import { Type } from 'typebox';
import { createServer, healthPlugin, type App } from '../src/index.js';

const api = { title: 'test', description: 'fast paths' };
let app: App;

afterEach(async () => {
  await app.close();
});

const listen = async (): Promise<string> => `http://127.0.0.1:${(await app.listen({ port: 0, host: '127.0.0.1' })).split(':').pop()}`;

describe('fast paths', () => {
  it('1. a request in a plugin gets no pino child until it writes a line, which then carries its request id', async () => {
    const lines: { reqId?: string; msg?: string }[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as { reqId?: string; msg?: string }) });
    app = createServer({ logger, api });
    const routes: FastifyPluginCallbackTypebox = (plugin, _options, done) => {
      // A pino logger (a child included) has bindings(); the request's stand-in has none until it writes.
      plugin.get('/who', (request, reply) => {
        void reply.send({ pinoChild: 'bindings' in request.log });
      });
      plugin.get('/warns', (request, reply) => {
        request.log.debug('not written at info: no child made for it either');
        request.log.warn('something to say');
        void reply.send({});
      });
      done();
    };
    void app.register(routes);
    expect((await app.inject({ method: 'GET', url: '/who' })).json()).toEqual({ pinoChild: false });
    await app.inject({ method: 'GET', url: '/warns', headers: { 'x-request-id': 'trace-7' } });
    expect(lines.filter((line) => line.reqId !== undefined)).toEqual([
      expect.objectContaining({ reqId: 'trace-7', msg: 'something to say' }),
    ]);
  });

  it('2. the response class adds CORS to every head written, and Connection: close once closing', async () => {
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

  it('3. a report that changes on every request is written by JSON.stringify, not by its schema', async () => {
    app = createServer({ logger: false, api });
    const schema = Type.Object({ uptime: Type.Number() });
    // A number schema's serializer would write "5" as 5; JSON.stringify keeps the string.
    const report = () => ({ uptime: '5' as unknown as number });
    void app.register(healthPlugin({ schema, report, changesEveryRequest: true }));
    expect((await app.inject({ method: 'GET', url: '/health' })).body).toBe('{"uptime":"5"}');
  });
});
