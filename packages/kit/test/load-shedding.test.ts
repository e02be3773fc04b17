import { afterEach, expect, it } from 'vitest';
import { setImmediate as yieldToLoop, setTimeout as sleep } from 'node:timers/promises';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Type } from 'typebox';
import { createServer, type App } from '../src/server.js';
import { healthPlugin } from '../src/health.js';
import { loadShedding } from '../src/load-shedding.js';
import { readyPlugin } from '../src/ready.js';

let app: App;
afterEach(async () => {
  await app.close();
});

/** Keeps the event loop about `lagMs` late, in turns, for `forMs`: the load a CPU-bound burst makes. */
async function lagTheLoop(lagMs: number, forMs: number): Promise<void> {
  for (const end = Date.now() + forMs; Date.now() < end;) {
    const turnEnd = Date.now() + lagMs;
    while (Date.now() < turnEnd); // busy, as a CPU-bound handler is
    await yieldToLoop();
    await sleep(1); // lets the timers run: under-pressure samples the lag on one
  }
}

it('answers 503 JSON with Retry-After while the event loop lags, without a log line, lets /health through, and serves again once the lag is gone', async () => {
  const lines: string[] = [];
  const sink = new Writable({ write: (chunk: Buffer, _encoding, done) => (lines.push(chunk.toString()), done()) });
  app = createServer({ logger: pino({ level: 'info' }, sink), api: { title: 'test', description: 'shedding' } });
  void app.register(loadShedding, { maxEventLoopDelayMs: 50 });
  void app.register(healthPlugin({ schema: Type.Object({ status: Type.String() }), report: () => ({ status: 'healthy' }) }));
  void app.register(readyPlugin());
  app.get('/work', async () => ({ done: true }));
  await app.ready();
  expect((await app.inject({ url: '/work' })).statusCode).toBe(200);

  await lagTheLoop(150, 1_300);
  const shed = await app.inject({ url: '/work' });
  expect(shed.statusCode).toBe(503);
  expect(shed.headers['retry-after']).toBe('1');
  expect(shed.json()).toEqual({ error: 'Service is overloaded; try again' });
  expect(shed.headers['x-request-id']).toBeTruthy();
  expect((await app.inject({ url: '/ready' })).statusCode).toBe(503);
  const health = await app.inject({ url: '/health' });
  expect([health.statusCode, health.json()]).toEqual([200, { status: 'healthy' }]);
  expect(lines).toEqual([]);

  await sleep(2_200); // two samples of a calm loop
  expect((await app.inject({ url: '/work' })).statusCode).toBe(200);
});
