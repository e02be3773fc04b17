import { createSimpleApp } from '@sample-services/simple/app';
import { commonContract } from '@sample-services/testing/contract/common';
import { simpleContract } from '@sample-services/testing/contract/simple';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe } from 'vitest';
import { createProxyApp } from '../src/app.js';

// The proxy's own contract runs in front of the echo upstream (app.test.ts). Here variant A's
// 404 and CORS answers must arrive through it unchanged: the proxy adds nothing.
describe('variant A in-process behind the proxy in-process', () => {
  let web: FastifyInstance;
  let proxy: FastifyInstance;
  let baseUrl: string;
  beforeAll(async () => {
    web = createSimpleApp({ logger: false, environment: 'production' });
    const upstream = new URL(await web.listen({ port: 0, host: '127.0.0.1' }));
    proxy = createProxyApp({ logger: false, upstream, maxConnections: 64, upstreamTimeoutMs: 5_000 });
    baseUrl = await proxy.listen({ port: 0, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await proxy.close();
    await web.close();
  });

  simpleContract(() => baseUrl, { environment: 'production' });
  commonContract(() => baseUrl);
});
