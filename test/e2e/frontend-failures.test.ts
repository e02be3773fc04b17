import { once } from 'node:events';
import { createServer, type Server, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { runServiceToExit, startService, type ServiceProcess } from '@sample-services/testing/service-process';

/** A stand-in backend on an ephemeral port whose answer each test chooses. */
async function fakeBackend(answer: (res: ServerResponse) => void): Promise<{ url: string; server: Server }> {
  const server = createServer((_req, res) => answer(res));
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return { url: `http://127.0.0.1:${port}`, server };
}

const failed = { error: 'Failed to fetch users' };

describe('the frontend of C when the backend fails', () => {
  const cleanups: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  async function frontendFor(backendUrl: string, timeoutMs = 5_000): Promise<ServiceProcess> {
    const frontend = await startService('frontend', { BACKEND_URL: backendUrl, BACKEND_TIMEOUT_MS: String(timeoutMs) });
    cleanups.push(() => frontend.stop());
    return frontend;
  }

  async function expectFailure(frontend: ServiceProcess, logged: RegExp): Promise<void> {
    const res = await fetch(`${frontend.baseUrl}/api/users`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual(failed);
    expect(frontend.lines.filter((l) => l.includes('could not fetch users from the backend')).join('\n')).toMatch(logged);
  }

  it('answers 500 and logs the cause when the backend is stopped (connection refused)', async () => {
    const { url, server } = await fakeBackend((res) => res.end('[]'));
    server.close();
    await once(server, 'close');
    await expectFailure(await frontendFor(url), /ECONNREFUSED/);
  });

  it('answers 500 after BACKEND_TIMEOUT_MS when the backend hangs, and keeps serving', async () => {
    const { url, server } = await fakeBackend(() => undefined); // never answers
    cleanups.push(async () => {
      server.closeAllConnections();
      server.close();
    });
    const frontend = await frontendFor(url, 300);
    await expectFailure(frontend, /timeout|aborted/i);
    const health = await fetch(`${frontend.baseUrl}/health`);
    expect(health.status).toBe(200);
  });

  it.each([
    [
      'a non-2xx status',
      (res: ServerResponse) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"x"}'),
      /backend answered 503/,
    ],
    [
      'a body that is not JSON',
      (res: ServerResponse) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>oops</h1>'),
      /SyntaxError|JSON/,
    ],
    ['a connection cut mid-answer', (res: ServerResponse) => res.socket?.destroy(), /SocketError|other side closed/],
  ])('answers 500 and logs the cause for %s', async (_case, answer, logged) => {
    const { url, server } = await fakeBackend(answer);
    cleanups.push(async () => server.close());
    await expectFailure(await frontendFor(url), logged);
  });

  it('lets a request waiting on a hanging backend finish with 500 after SIGTERM, then exits 0', async () => {
    const { url, server } = await fakeBackend(() => undefined);
    cleanups.push(async () => {
      server.closeAllConnections();
      server.close();
    });
    const frontend = await frontendFor(url, 1_000);
    const inFlight = fetch(`${frontend.baseUrl}/api/users`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = frontend.stop('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual(failed);
    expect(await exited).toBe(0);
  });

  it('recovers once the backend answers again', async () => {
    let healthy = false;
    const { url, server } = await fakeBackend((res) =>
      healthy ? res.writeHead(200, { 'content-type': 'application/json' }).end('[{"id":1}]') : res.writeHead(502).end(),
    );
    cleanups.push(async () => server.close());
    const frontend = await frontendFor(url);
    expect((await fetch(`${frontend.baseUrl}/api/users`)).status).toBe(500);
    healthy = true;
    const res = await fetch(`${frontend.baseUrl}/api/users`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('[{"id":1}]');
  });
});

describe('the frontend of C at start-up', () => {
  it.each([
    [{ BACKEND_URL: 'http//backend' }, 'BACKEND_URL must be a URL, got "http//backend"'],
    [{ BACKEND_URL: 'ftp://backend' }, 'BACKEND_URL must start with http:// or https://, got "ftp://..."'],
    [{ BACKEND_TIMEOUT_MS: '0' }, 'BACKEND_TIMEOUT_MS must be an integer from 1 to 600000, got "0"'],
  ])('%j stops the process with one line', async (env, message) => {
    const { code, output } = await runServiceToExit('frontend', { PORT: '0', ...env });
    expect(code).toBe(1);
    expect(output).toBe(`frontend: invalid configuration: ${message}\n`);
  });
});
