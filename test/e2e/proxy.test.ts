import { get } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { commonContract } from '@sample-services/testing/contract/common';
import { proxyContract } from '@sample-services/testing/contract/proxy';
import { simpleContract } from '@sample-services/testing/contract/simple';
import { startEchoUpstream, type EchoUpstream } from '@sample-services/testing/echo-upstream';
import { freePort } from '@sample-services/testing/free-port';
import { runServiceToExit, startService, type ServiceProcess } from '@sample-services/testing/service-process';

/** The status and body of a GET sent on a connection of its own, closed after the answer; `socketPath` ('\0' for '@'): on that Unix socket. */
function answerOnOwnConnection(url: string, socketPath?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false, ...(socketPath === undefined ? {} : { socketPath }) }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    }).on('error', reject);
  });
}
const statusOnOwnConnection = async (url: string, socketPath?: string): Promise<number> =>
  (await answerOnOwnConnection(url, socketPath)).status;

describe('the TypeScript proxy as a real process, in front of the echo upstream', () => {
  let upstream: EchoUpstream;
  let proxy: ServiceProcess;
  beforeAll(async () => {
    upstream = await startEchoUpstream();
    proxy = await startService('proxy', { UPSTREAM_URL: upstream.url, UPSTREAM_TIMEOUT_MS: '2000' });
  });
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
  });

  proxyContract({ baseUrl: () => proxy.baseUrl, upstream: () => upstream });

  it('logs its start-up line as JSON in production', () => {
    const started = proxy.lines.map((l) => JSON.parse(l) as { msg: string }).find((l) => l.msg.startsWith('Proxy running'));
    expect(started?.msg).toBe(`Proxy running on port ${proxy.port}`);
  });

  it('logged the upstream failures of the contract with their reason', () => {
    const warnings = proxy.lines.map((l) => JSON.parse(l) as { level: number; msg: string; err?: { stack?: string } });
    const reasons = (msg: string): string =>
      warnings
        .filter((l) => l.level === 40 && l.msg === msg)
        .map((l) => l.err?.stack ?? '')
        .join('\n');
    expect(reasons('Bad gateway: upstream unavailable')).toContain('ECONNREFUSED');
    expect(reasons('Gateway timeout: upstream did not answer in time')).toContain('HeadersTimeoutError');
  });
});

describe('variant A behind the TypeScript proxy', () => {
  let web: ServiceProcess;
  let proxy: ServiceProcess;
  beforeAll(async () => {
    web = await startService('simple');
    proxy = await startService('proxy', { UPSTREAM_URL: web.baseUrl });
  });
  afterAll(async () => {
    await proxy?.stop();
    await web?.stop();
  });

  // Variant A's own 404 and CORS answers arrive unchanged: the proxy adds nothing.
  simpleContract(() => proxy.baseUrl, { environment: 'production' });
  commonContract(() => proxy.baseUrl);
});

describe('the TypeScript proxy process: limits, shutdown and configuration', () => {
  let upstream: EchoUpstream;
  beforeAll(async () => {
    upstream = await startEchoUpstream();
  });
  afterAll(async () => {
    await upstream?.close();
  });

  it('lets a request in flight finish on SIGTERM, then exits 0', async () => {
    const proxy = await startService('proxy', { UPSTREAM_URL: upstream.url });
    const arrived = upstream.nextHanging();
    const response = fetch(`${proxy.baseUrl}/slow?hang`);
    await arrived;
    const exited = proxy.stop('SIGTERM');
    // Release the upstream only once the proxy has begun shutting down.
    await expect.poll(() => proxy.lines.some((l) => l.includes('shutting down')), { timeout: 5_000 }).toBe(true);
    upstream.releaseHanging();
    const res = await response;
    expect(res.status).toBe(200);
    expect(((await res.json()) as { url: string }).url).toBe('/slow?hang');
    expect(await exited).toBe(0);
  });

  it('forwards a new client at once while two requests hang at the upstream', async () => {
    const proxy = await startService('proxy', { UPSTREAM_URL: upstream.url });
    try {
      const held: Promise<number>[] = [];
      for (const path of ['/one?hang', '/two?hang']) {
        const arrived = upstream.nextHanging();
        held.push(statusOnOwnConnection(`${proxy.baseUrl}${path}`));
        await arrived;
      }
      expect(await statusOnOwnConnection(`${proxy.baseUrl}/three`)).toBe(200);
      upstream.releaseHanging();
      expect(await Promise.all(held)).toEqual([200, 200]);
    } finally {
      upstream.releaseHanging();
      await proxy.stop();
    }
  });

  it('leaves /health and /ready to the upstream, like every path: 502 while it is down', async () => {
    const proxy = await startService('proxy', { UPSTREAM_URL: `http://127.0.0.1:${await freePort()}` });
    try {
      const upstreamDown = { status: 502, body: '{"error":"Bad gateway: upstream unavailable"}' };
      expect(await answerOnOwnConnection(`${proxy.baseUrl}/health`)).toEqual(upstreamDown);
      expect(await answerOnOwnConnection(`${proxy.baseUrl}/ready`)).toEqual(upstreamDown);
    } finally {
      await proxy.stop();
    }
  });

  it.each([
    [{ UPSTREAM_URL: 'https://web:3000' }, 'UPSTREAM_URL must start with http://, got "https://..."'],
    [{ UPSTREAM_URL: 'web:3000' }, 'UPSTREAM_URL must start with http://, got "web://..."'],
    [
      { UPSTREAM_URL: 'http://web:3000/api' },
      'UPSTREAM_URL must be an origin like http://web:3000, without path, query or credentials, got "http://web:3000/api"',
    ],
    [{ MAX_CONNECTIONS: '0' }, 'MAX_CONNECTIONS must be an integer from 1 to 1000000, got "0"'],
    [{ UPSTREAM_TIMEOUT_MS: '1s' }, 'UPSTREAM_TIMEOUT_MS must be an integer from 1 to 3600000, got "1s"'],
    [{ PORT: 'eighty' }, 'PORT must be an integer from 0 to 65535, got "eighty"'],
  ])('%o stops the process with exit 1 and one line', async (env, message) => {
    const { code, output } = await runServiceToExit('proxy', { PORT: '0', ...env });
    expect(code).toBe(1);
    expect(output).toBe(`proxy: invalid configuration: ${message}\n`);
  });
});
