import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { lstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, get } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { freePort } from '@svc/testing/free-port';
import { startListeningProcess } from '@svc/testing/listening-process';
import { afterEach, describe, expect, it } from 'vitest';

const fixture = new URL('./fixtures/slow-service.ts', import.meta.url).pathname;
let tempDir: string | undefined;

afterEach(() => {
  if (tempDir !== undefined) rmSync(tempDir, { recursive: true, force: true });
  tempDir = undefined;
});

/** The status of a GET on a connection of its own (no pool), so that it waits for a place as a new client does. */
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

  it('serves probes on PROBE_SOCKET, a file path, replacing a socket left there; anything else at the path stays and stops the start', async () => {
    tempDir = mkdtempSync(join(tmpdir(), 'probe-socket-'));
    const socketPath = join(tempDir, 'probe.sock');
    const probe = (): Promise<number> =>
      new Promise((resolve, reject) => {
        get({ socketPath, path: '/health', agent: false }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        }).on('error', reject);
      });
    // A killed process leaves its socket file: the next start listens there all the same.
    for (let start = 0; start < 2; start += 1) {
      const service = await startFixture({ PROBE_SOCKET: socketPath });
      expect(await probe()).toBe(200);
      await service.stop('SIGKILL');
    }
    expect(lstatSync(socketPath).isSocket()).toBe(true);
    // A file that is not a socket is never removed.
    rmSync(socketPath);
    writeFileSync(socketPath, 'not a socket');
    const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
      env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'production', PROBE_SOCKET: socketPath },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await once(child, 'exit')).toEqual([1, null]);
    expect(stderr).toContain(`cannot listen on PROBE_SOCKET ${socketPath}: listen EADDRINUSE`);
    expect(readFileSync(socketPath, 'utf8')).toBe('not a socket');
  });

  it('serves probes on PROBE_PORT, on the loopback, at once while every place of the public port is taken', async () => {
    const probePort = await freePort();
    const service = await startFixture({ PROBE_PORT: String(probePort), MAX_CONNECTIONS: '1', SLOW_MS: '1500' });
    try {
      // The one place is held by a slow request; the next connection on the public port waits for it.
      const held = fetch(`${service.baseUrl}/slow`);
      await new Promise((resolve) => setTimeout(resolve, 200));
      let waitingAnswered = false;
      const waiting = statusOnOwnConnection(`${service.baseUrl}/health`).finally(() => (waitingAnswered = true));
      expect(await statusOnOwnConnection(`http://127.0.0.1:${probePort}/health`)).toBe(200);
      expect(waitingAnswered).toBe(false);
      expect((await held).status).toBe(200);
      expect(await waiting).toBe(200);
    } finally {
      await service.stop('SIGTERM');
    }
  });

  it('stops the start in one line naming PROBE_PORT when it cannot listen there', async () => {
    const busy = createServer();
    busy.listen(0, '127.0.0.1');
    await once(busy, 'listening');
    const { port } = busy.address() as AddressInfo;
    try {
      const child = spawn(process.execPath, ['--import', 'tsx', fixture], {
        env: { PATH: process.env.PATH, HOST: '127.0.0.1', PORT: '0', NODE_ENV: 'production', PROBE_PORT: String(port) },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      let stderr = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      expect(await once(child, 'exit')).toEqual([1, null]);
      expect(stderr).toContain(`cannot listen on PROBE_PORT ${port}: listen EADDRINUSE`);
    } finally {
      busy.close();
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
