import { afterEach, describe, expect, it } from 'vitest';
import { pino } from 'pino';
import { createServer, type App } from '../src/server.js';

const api = { title: 'test', description: 'request ids' };
let app: App;

afterEach(async () => {
  await app.close();
});

/** An app whose /boom fails, logging to `lines`, listening (the header is added where the head is written: a socket). */
async function build(lines: Record<string, unknown>[] = []): Promise<string> {
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  app = createServer({ logger, api });
  app.get('/id', (request, reply) => {
    void reply.send({ id: request.id });
  });
  app.get('/boom', async () => {
    throw new Error('unexpected');
  });
  return app.listen({ port: 0, host: '127.0.0.1' });
}

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('X-Request-Id', () => {
  it.each(['abc', 'A.b_c:d-1', '7f3c2a9e1b4d4c8f', 'x'.repeat(128)])(
    'keeps a well-formed one (%s) as the request id and returns it',
    async (sent) => {
      const res = await fetch(`${await build()}/id`, { headers: { 'x-request-id': sent } });
      expect(res.headers.get('x-request-id')).toBe(sent);
      expect(await res.json()).toEqual({ id: sent });
    },
  );

  it.each([
    ['too long', 'x'.repeat(129)],
    ['a space', 'a b'],
    ['a quote and angle brackets', '"><script>'],
    ['a slash', 'a/b'],
    ['a non-ASCII letter', 'caf\u00e9'],
  ])('replaces one with %s by a new UUID', async (_why, sent) => {
    const res = await fetch(`${await build()}/id`, { headers: { 'x-request-id': sent } });
    const id = res.headers.get('x-request-id');
    expect(id).toMatch(uuid);
    expect(await res.json()).toEqual({ id });
  });

  it('makes one when none was sent, a different one for each request', async () => {
    const baseUrl = await build();
    const [first, second] = await Promise.all([fetch(`${baseUrl}/id`), fetch(`${baseUrl}/id`)]);
    expect(first?.headers.get('x-request-id')).toMatch(uuid);
    expect(second?.headers.get('x-request-id')).toMatch(uuid);
    expect(first?.headers.get('x-request-id')).not.toBe(second?.headers.get('x-request-id'));
  });

  it('returns it on errors, and the error line in the log carries it', async () => {
    const lines: Record<string, unknown>[] = [];
    const baseUrl = await build(lines);
    const failed = await fetch(`${baseUrl}/boom`, { headers: { 'x-request-id': 'req-500' } });
    expect(failed.status).toBe(500);
    expect(failed.headers.get('x-request-id')).toBe('req-500');
    expect(lines.filter((line) => line.level === 50)).toEqual([expect.objectContaining({ reqId: 'req-500', msg: 'request failed' })]);
    const missing = await fetch(`${baseUrl}/nowhere`, { headers: { 'x-request-id': 'req-404' } });
    expect(missing.headers.get('x-request-id')).toBe('req-404');
  });
});
