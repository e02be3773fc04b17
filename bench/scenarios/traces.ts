import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { getRoute, measureRoute, startMeasured, type Row, type RunSettings } from '../measure.js';
import { nodeServer, serviceServer, startServer, type ServerProcess } from '../server-process.js';
import type { ScenarioResult } from '../targets.js';
import { bareRelay } from './proxy.js';
import { bareSimple } from './simple.js';

/** The three ways a service runs: no endpoint (the SDK not loaded), every trace sampled, 1 in 100. */
const modes = [
  { label: 'tracing off', env: {} },
  { label: 'tracing on', env: { OTEL_TRACES_SAMPLER: 'always_on' } },
  { label: 'tracing 1%', env: { OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.01' } },
] as const;

/**
 * A collector stand-in on the bench's side: it takes every OTLP/HTTP export and answers 200 without
 * decoding it, so the figures are what tracing costs the service, not what a collector does.
 */
async function startSink(): Promise<{ url: string; close: () => Promise<void> }> {
  const server = createServer((request, response) => {
    request.resume();
    request.once('end', () => response.writeHead(200, { 'content-type': 'application/x-protobuf' }).end());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Traces: A and the TypeScript proxy with tracing off, on (every trace sampled) and on at 1%,
 * exporting to a sink, beside bare node:http (A) and a bare undici relay (the proxy), on the
 * server core in the same rounds; A's group is stopped before the proxy's starts. Off is A as the
 * other scenarios run it, the same code as scenario a's, so no target: the costs of on are reported.
 */
export async function runTraces(settings: RunSettings): Promise<ScenarioResult> {
  const sink = await startSink();
  const upstream = await startServer(nodeServer('bare upstream', bareSimple, {}, settings.cpus.other));
  const started: ServerProcess[] = [upstream];
  const start = async (
    label: string,
    service: 'simple' | 'proxy',
    env: Record<string, string>,
    traced: boolean,
  ): Promise<ServerProcess> => {
    const tracing: Record<string, string> = traced ? { OTEL_EXPORTER_OTLP_ENDPOINT: sink.url } : {};
    const [server] = await startMeasured([serviceServer(label, service, { ...env, ...tracing }, settings.cpus.server)], settings.startups);
    started.push(server);
    return server;
  };
  /** Stops a group measured already: only the servers compared share the measured core. */
  const stop = async (group: ServerProcess[]): Promise<void> => {
    await Promise.all(group.map((server) => server.stop()));
    started.splice(0, started.length, ...started.filter((server) => !group.includes(server)));
  };
  try {
    const traced = (mode: (typeof modes)[number]): boolean => mode.label !== 'tracing off';
    const rows: Row[] = [];
    const simples: ServerProcess[] = [];
    for (const mode of modes) simples.push(await start(`simple, ${mode.label}`, 'simple', mode.env, traced(mode)));
    const bare = await startServer(nodeServer('bare node:http', bareSimple, {}, settings.cpus.server));
    started.push(bare);
    for (const path of ['/', '/api/users']) rows.push(...(await measureRoute('Traces A', getRoute(path), [...simples, bare], settings)));
    await stop([...simples, bare]);

    const proxies: ServerProcess[] = [];
    for (const mode of modes) {
      const env = { ...mode.env, UPSTREAM_URL: upstream.baseUrl, METRICS_PORT: '0' };
      proxies.push(await start(`proxy, ${mode.label}`, 'proxy', env, traced(mode)));
    }
    const relay = await startServer(
      nodeServer('bare node:http + undici', bareRelay, { BACKEND_URL: upstream.baseUrl }, settings.cpus.server),
    );
    started.push(relay);
    rows.push(...(await measureRoute('Traces proxy', getRoute('/api/users'), [...proxies, relay], settings)));

    return { rows, targets: [] };
  } finally {
    await Promise.all(started.map((server) => server.stop()));
    await sink.close();
  }
}
