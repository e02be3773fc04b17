import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, get } from 'node:http';
import { connect, type AddressInfo, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '@sample-services/testing/free-port';
import { startListeningProcess } from '@sample-services/processes/listening-process';
import { afterEach, describe, expect, it } from 'vitest';

const fixture = new URL('./fixtures/slow-service.ts', import.meta.url).pathname;
let tempDir: string | undefined;

afterEach(() => {
  if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
});

/** A TCP connection to the loopback port, once connected. */
async function openSocket(port: number): Promise<Socket> {
  const socket = connect(port, '127.0.0.1');
  await once(socket, 'connect');
  return socket;
}

/** The status of a GET on a connection of its own (no pool), as a new client's. */
function statusOnOwnConnection(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    }).on('error', reject);
  });
}

/** The fixture as a production process; on an ephemeral port learnt from its JSON start-up line unless `port` is given. */
function startFixture(env: Record<string, string>, port?: number) {
  return startListeningProcess({
    label: 'slow-service fixture',
    command: process.execPath,
    args: ['--import', 'tsx', fixture],
    env: { PATH: process.env.PATH, HOST: '127.0.0.1', NODE_ENV: 'production', ...env },
    startedMessage: (announced) => `Slow service running on port ${announced}`,
    port,
  });
}

describe('runService', () => {
  it('lets an in-flight request finish on SIGTERM, refuses new connections, and exits 0', async () => {
    const fixtureProcess = await startFixture({ SLOW_MS: '800' });
    const inFlight = fetch(`${fixtureProcess.baseUrl}/slow`);
    await new Promise((resolve) => setTimeout(resolve, 200));
    const exited = fixtureProcess.stop('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ done: true });
    await expect(fetch(`${fixtureProcess.baseUrl}/health`)).rejects.toThrow();
    expect(await exited).toBe(0);
  });

  it('exits 0 on SIGTERM while the app is still being built', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', NODE_ENV: 'production', BUILD_MS: '15000' },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const exited = once(child, 'exit');
    const lines: string[] = [];
    await new Promise<void>((resolve) => {
      createInterface({ input: child.stdout }).on('line', (line) => {
        lines.push(line);
        if (line.includes('"building"')) resolve();
      });
    });
    child.kill('SIGTERM');
    expect(await exited).toEqual([0, null]);
    expect(lines.some((l) => l.includes('running on port'))).toBe(false);
  });

  it('stops the start in one line naming PORT when it is taken', async () => {
    const busy = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const { port } = busy.address() as AddressInfo;
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
        env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: String(port), NODE_ENV: 'production' },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      expect(await once(child, 'exit')).toEqual([1, null]);
      expect(stderr).toContain(`port ${port} is already in use; set PORT to another port`);
    } finally {
      busy.close();
    }
  });

  it('answers GET /health at once beside 64 clients sending their bodies a byte every 5 s and 64 idle keep-alive connections', async () => {
    const service = await startFixture({});
    const { port } = new URL(service.baseUrl);
    const held: Socket[] = [];
    try {
      for (let i = 0; i < 64; i++) {
        const slow = await openSocket(Number(port));
        slow.write('POST /slow HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n{');
        const drip = setInterval(() => slow.write(' '), 5_000);
        slow.once('close', () => clearInterval(drip));
        held.push(slow);
        // An idle pooled connection: one request answered, then kept open.
        const idle = await openSocket(Number(port));
        idle.write('GET /health HTTP/1.1\r\nHost: x\r\n\r\n');
        await once(idle, 'data');
        held.push(idle);
      }
      const startedAt = performance.now();
      expect(await statusOnOwnConnection(`${service.baseUrl}/health`)).toBe(200);
      expect(performance.now() - startedAt).toBeLessThan(1_000);
    } finally {
      for (const socket of held) socket.destroy();
      await service.stop('SIGTERM');
    }
  });

  it('gives 200 connections opened at once each their answer, none waiting behind the others', async () => {
    const service = await startFixture({});
    try {
      const startedAt = performance.now();
      const waits = await Promise.all(
        Array.from({ length: 200 }, () => statusOnOwnConnection(`${service.baseUrl}/health`).then(() => performance.now() - startedAt)),
      );
      expect(Math.max(...waits)).toBeLessThan(1_000);
    } finally {
      await service.stop('SIGTERM');
    }
  });

  it('closes connections beyond MAX_CONNECTIONS as they arrive, and logs how many', async () => {
    const service = await startFixture({ MAX_CONNECTIONS: '2' });
    const { port } = new URL(service.baseUrl);
    const open = [await openSocket(Number(port)), await openSocket(Number(port))];
    try {
      await expect(statusOnOwnConnection(`${service.baseUrl}/health`)).rejects.toThrow();
      await expect.poll(() => service.lines.some((line) => line.includes('connections closed unanswered: 2 open already'))).toBe(true);
      for (const socket of open) socket.destroy();
      await expect.poll(() => statusOnOwnConnection(`${service.baseUrl}/health`).catch(() => 0)).toBe(200);
    } finally {
      for (const socket of open) socket.destroy();
      await service.stop('SIGTERM');
    }
  });

  it('writes JSON log lines to LOG_DIR/<name>.log as well as stdout', async () => {
    tempDir = mkdtempSync(join(tmpdir(), 'kit-logs-'));
    const { stop, lines } = await startFixture({ LOG_DIR: tempDir });
    expect(await stop('SIGTERM')).toBe(0);
    const fileLines = readFileSync(join(tempDir, 'slow.log'), 'utf8').trim().split('\n');
    expect(fileLines).toEqual(lines);
    expect(fileLines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain('stopped');
  });

  it('writes JSON lines in development when its output is not a terminal', async () => {
    const fixtureProcess = await startFixture({ NODE_ENV: 'development' });
    expect(await fixtureProcess.stop('SIGINT')).toBe(0);
    const messages = fixtureProcess.lines.map((line) => (JSON.parse(line) as { msg: string }).msg);
    expect(messages).toContainEqual(expect.stringMatching(/^Slow service running on port \d+$/));
  });

  it('writes readable, non-JSON lines when LOG_FORMAT=pretty', async () => {
    // Readable lines hold no JSON start-up line to learn the port from: it is chosen here.
    const port = await freePort();
    const { stop, lines } = await startFixture({ NODE_ENV: 'development', LOG_FORMAT: 'pretty', PORT: String(port) }, port);
    await expect.poll(() => lines.some((l) => l.includes('Slow service running on port'))).toBe(true);
    expect(await stop('SIGINT')).toBe(0);
    const started = lines.find((l) => l.includes('Slow service running on port'));
    expect(started).toMatch(/INFO \(slow\): Slow service running on port \d+/);
    expect(() => JSON.parse(started ?? '')).toThrow();
  });

  it('logs each request only at LOG_LEVEL=debug', async () => {
    for (const [level, expected] of [
      ['info', false],
      ['debug', true],
    ] as const) {
      const { baseUrl, stop, lines } = await startFixture({ LOG_LEVEL: level });
      await (await fetch(`${baseUrl}/health`)).text();
      expect(await stop('SIGTERM')).toBe(0);
      const messages = lines.map((l) => (JSON.parse(l) as { msg: string }).msg);
      expect(messages.includes('request completed')).toBe(expected);
    }
  });
});
