import type { AddressInfo } from 'node:net';
import type { App } from '@sample-services/kit/server';
import type { Logger } from '@sample-services/kit/logger';
import { afterAll, beforeAll } from 'vitest';
import { startEchoUpstream, type EchoUpstream } from '@sample-services/testing/echo-upstream';
import { createProxyApp } from '../src/app.js';

export interface ProxyOnEcho {
  upstream: () => EchoUpstream;
  app: () => App;
  baseUrl: () => string;
}

/**
 * For the describe block it is called in: the proxy in front of an echo upstream, listening on a
 * loopback port from beforeAll to afterAll; `prepare` adds to the app (a hook) before it listens.
 */
export function proxyOnEchoUpstream(logger: Logger | false, prepare?: (app: App) => void): ProxyOnEcho {
  let upstream: EchoUpstream | undefined;
  let app: App | undefined;
  let baseUrl = '';
  beforeAll(async () => {
    upstream = await startEchoUpstream();
    app = createProxyApp({ logger, upstream: new URL(upstream.url), maxConnections: 64, upstreamTimeoutMs: 2_000 });
    prepare?.(app);
    await app.listen({ port: 0, host: '127.0.0.1' });
    baseUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await upstream?.close();
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('the proxy is started in beforeAll');
    return value;
  };
  return { upstream: () => started(upstream), app: () => started(app), baseUrl: () => baseUrl };
}
