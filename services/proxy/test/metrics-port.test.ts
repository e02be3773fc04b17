import { afterEach, expect, it } from 'vitest';
import { createServer as createHttpServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { countRequests } from '@sample-services/kit/metrics';
import { createServer, type App } from '@sample-services/kit/server';
import { serveMetricsOnPort } from '../src/metrics-port.js';

const api = { title: 'test', description: 'metrics port' };
let app: App;
afterEach(async () => {
  await app.close();
});

it('serves the metrics on a port of their own, GET /metrics only, counting the app port', async () => {
  app = createServer({ logger: false, api });
  void app.register(countRequests);
  const metricsPort = serveMetricsOnPort(app, { port: 0, host: '127.0.0.1' });
  app.get('/items/:id', (_request, reply) => void reply.send({ ok: true }));
  const baseUrl = await app.listen({ port: 0, host: '127.0.0.1' });
  expect((await fetch(`${baseUrl}/metrics`)).status).toBe(404);
  await fetch(`${baseUrl}/items/1`);
  const port = metricsPort.port();
  expect(port).toBeGreaterThan(0);
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  expect(text).toContain('http_requests_total{method="GET",route="/items/:id",status_code="200"} 1');
  expect((await fetch(`http://127.0.0.1:${port}/other`)).status).toBe(404);
});

it('logs a metrics port it cannot listen on and serves on without it', async () => {
  const taken = createHttpServer();
  await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
  const { port } = taken.address() as AddressInfo;
  const lines: { level: number; msg: string }[] = [];
  app = createServer({
    logger: pino({}, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) }),
    api,
  });
  serveMetricsOnPort(app, { port, host: '127.0.0.1' });
  await app.listen({ port: 0, host: '127.0.0.1' });
  await expect
    .poll(() => lines.find((line) => line.level === 50)?.msg)
    .toBe(`metrics not served: cannot listen on port ${port} (EADDRINUSE); the service goes on without them`);
  await new Promise((resolve) => taken.close(resolve));
});
