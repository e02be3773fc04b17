import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { describe, expect, it, onTestFinished } from 'vitest';
import { services, startedLine } from '@sample-services/manifest';
import { freePort } from '@sample-services/testing/free-port';
import { startListeningProcess } from '@sample-services/processes/listening-process';
import { repoRoot } from '@sample-services/testing/repo-root';

/**
 * Root without the one capability that binds ports below the system's unprivileged start: still root,
 * so a checkout in a private folder (mode 0700, such as /root) stays readable, as another user's would not.
 */
const WITHOUT_LOW_PORTS = ['--bounding-set=-net_bind_service'];

/**
 * Runs `npm start -- <stack>` without the build step (npm test has built already); `unprivileged`:
 * without CAP_NET_BIND_SERVICE through setpriv when the tests run as root (CI), as the user itself otherwise.
 */
function startStack(stack: string | undefined, env: Record<string, string>, { unprivileged = false } = {}) {
  const runner = [process.execPath, '--import', 'tsx', 'scripts/start.ts', ...(stack === undefined ? [] : [stack])];
  const [command = '', ...args] = unprivileged && process.getuid?.() === 0 ? ['setpriv', ...WITHOUT_LOW_PORTS, ...runner] : runner;
  const child = spawn(command, args, {
    cwd: repoRoot,
    env: { PATH: process.env.PATH, NODE_ENV: 'production', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const lines: string[] = [];
  for (const input of [child.stdout, child.stderr]) createInterface({ input }).on('line', (line) => lines.push(line));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  // A failed assertion must not leave the stack running (the runner stops its services on SIGTERM).
  onTestFinished(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
    await exited;
  });
  const up = new Promise<void>((resolve, reject) => {
    const timer = setInterval(() => {
      if (lines.some((l) => /^start: stack ".*" is up/.test(l))) {
        clearInterval(timer);
        resolve();
      }
    }, 50);
    void exited.then(() => {
      clearInterval(timer);
      reject(new Error(`stack exited:\n${lines.join('\n')}`));
    });
  });
  up.catch(() => undefined); // observed only by the tests that expect the stack to come up
  return { child, lines, exited, up };
}

/**
 * Holds `port` on every address until the test ends; undefined when another program holds it
 * already (taken either way).
 */
async function occupy(port: number): Promise<Server | undefined> {
  const server = createServer();
  const held = await new Promise<boolean>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => (error.code === 'EADDRINUSE' ? resolve(false) : reject(error)));
    server.listen(port, '0.0.0.0', () => resolve(true));
  });
  if (!held) return undefined;
  onTestFinished(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return server;
}

describe('npm start -- [stack]', () => {
  it('runs the simple stack by default: A, then the proxy once A is healthy; SIGTERM stops both', async () => {
    const [webPort, proxyPort] = [await freePort(), await freePort()];
    const stack = startStack(undefined, { SIMPLE_PORT: String(webPort), PROXY_PORT: String(proxyPort) });
    await stack.up;
    const order = stack.lines.filter((l) => / is healthy on /.test(l));
    expect(order).toEqual([
      `start: simple is healthy on http://127.0.0.1:${webPort}`,
      `start: proxy is healthy on http://127.0.0.1:${proxyPort}`,
    ]);
    expect(stack.lines.some((l) => l.startsWith('[simple] ') && l.includes(`Server running on port ${webPort}`))).toBe(true);
    // The services' JSON lines are shown readably.
    expect(stack.lines.filter((l) => l.startsWith('[simple] {'))).toEqual([]);
    const viaProxy = (await (await fetch(`http://127.0.0.1:${proxyPort}/`)).json()) as { message: string };
    expect(viaProxy.message).toBe('Hello from Docker!');
    stack.child.kill('SIGTERM');
    expect(await stack.exited).toBe(0);
    await expect(fetch(`http://127.0.0.1:${webPort}/health`)).rejects.toThrow();
    await expect(fetch(`http://127.0.0.1:${proxyPort}/health`)).rejects.toThrow();
  });

  it('runs the database stack on the file database, and the two-tier stack in order', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stack-data-'));
    try {
      const databasePort = await freePort();
      const database = startStack('database', { DATABASE_PORT: String(databasePort), DATA_DIR: dataDir });
      await database.up;
      const health = (await (await fetch(`http://127.0.0.1:${databasePort}/health`)).json()) as { database: string };
      expect(health.database).toBe('connected');
      database.child.kill('SIGINT');
      expect(await database.exited).toBe(0);
      expect(existsSync(join(dataDir, 'app.db'))).toBe(true);

      const [backendPort, frontendPort] = [await freePort(), await freePort()];
      const twoTier = startStack('two-tier', { BACKEND_PORT: String(backendPort), FRONTEND_PORT: String(frontendPort), DATA_DIR: dataDir });
      await twoTier.up;
      expect(twoTier.lines.filter((l) => / is healthy on /.test(l))).toEqual([
        `start: backend is healthy on http://127.0.0.1:${backendPort}`,
        `start: frontend is healthy on http://127.0.0.1:${frontendPort}`,
      ]);
      const viaFrontend = await fetch(`http://127.0.0.1:${frontendPort}/api/users`);
      expect(viaFrontend.status).toBe(200);
      expect(await viaFrontend.json()).toEqual(await (await fetch(`http://127.0.0.1:${backendPort}/api/users`)).json());
      twoTier.child.kill('SIGTERM');
      expect(await twoTier.exited).toBe(0);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('names the port and the variable that moves it when a port is taken', async () => {
    const blocker = createServer().listen(0, '0.0.0.0');
    await once(blocker, 'listening');
    const taken = (blocker.address() as { port: number }).port;
    try {
      const stack = startStack('simple', { SIMPLE_PORT: String(await freePort()), PROXY_PORT: String(taken) });
      expect(await stack.exited).toBe(1);
      expect(stack.lines).toEqual([`start: port ${taken} is already in use; set PROXY_PORT to another port`]);
    } finally {
      blocker.close();
    }
  });

  it('moves a member whose default port is taken to one it can get, and links the others to it', async () => {
    await occupy(services.simple.port);
    const proxyPort = await freePort();
    const stack = startStack('simple', { PROXY_PORT: String(proxyPort) });
    await stack.up;
    const moved = new RegExp(
      `^start: port ${services.simple.port} is already in use; simple serves on port (\\d+) instead \\(set SIMPLE_PORT to choose one\\)$`,
    );
    const webPort = Number(stack.lines.map((l) => moved.exec(l)?.[1]).find(Boolean));
    expect(webPort).not.toBe(services.simple.port);
    expect(stack.lines).toContain(`start: simple is healthy on http://127.0.0.1:${webPort}`);
    expect(stack.lines).toContain(`start: stack "simple" is up; open http://127.0.0.1:${proxyPort}/ (Ctrl-C stops it)`);
    // The proxy's upstream is where A really listens.
    const viaProxy = (await (await fetch(`http://127.0.0.1:${proxyPort}/`)).json()) as { message: string };
    expect(viaProxy.message).toBe('Hello from Docker!');
    stack.child.kill('SIGTERM');
    expect(await stack.exited).toBe(0);
  });

  it('moves the two-tier backend off its taken default port, and the frontend reaches it there', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'stack-data-'));
    onTestFinished(() => rmSync(dataDir, { recursive: true, force: true }));
    await occupy(services.backend.port);
    const frontendPort = await freePort();
    const stack = startStack('two-tier', { FRONTEND_PORT: String(frontendPort), DATA_DIR: dataDir });
    await stack.up;
    expect(stack.lines.filter((l) => l.startsWith('start: port '))).toEqual([
      expect.stringMatching(new RegExp(`^start: port ${services.backend.port} is already in use; backend serves on port \\d+ instead`)),
    ]);
    const viaFrontend = await fetch(`http://127.0.0.1:${frontendPort}/api/users`);
    expect(viaFrontend.status).toBe(200);
    stack.child.kill('SIGTERM');
    expect(await stack.exited).toBe(0);
  });

  it('moves the proxy off privileged port 80 for a user who may not bind it; PROXY_PORT=80 set explicitly fails as before', async (context) => {
    const unprivilegedFrom = Number(readFileSync('/proc/sys/net/ipv4/ip_unprivileged_port_start', 'utf8'));
    if (unprivilegedFrom <= services.proxy.port)
      context.skip(`every user may bind port ${services.proxy.port} here (ip_unprivileged_port_start ${unprivilegedFrom})`);
    if (process.getuid?.() === 0 && spawnSync('setpriv', ['--version']).status !== 0) {
      if (process.env.CI === 'true') throw new Error('setpriv (util-linux) is needed to start the stack without CAP_NET_BIND_SERVICE');
      context.skip('setpriv (util-linux) is missing: cannot start the stack without CAP_NET_BIND_SERVICE');
    }
    const webPort = await freePort();
    const stack = startStack('simple', { SIMPLE_PORT: String(webPort) }, { unprivileged: true });
    await stack.up;
    const moved = /^start: port 80 needs more privileges; proxy serves on port (\d+) instead \(set PROXY_PORT to choose one\)$/;
    const proxyPort = Number(stack.lines.map((l) => moved.exec(l)?.[1]).find(Boolean));
    expect(proxyPort).toBeGreaterThanOrEqual(unprivilegedFrom);
    expect(stack.lines).toContain(`start: stack "simple" is up; open http://127.0.0.1:${proxyPort}/ (Ctrl-C stops it)`);
    const viaProxy = (await (await fetch(`http://127.0.0.1:${proxyPort}/`)).json()) as { message: string };
    expect(viaProxy.message).toBe('Hello from Docker!');
    stack.child.kill('SIGTERM');
    expect(await stack.exited).toBe(0);

    const explicit = startStack('simple', { SIMPLE_PORT: String(await freePort()), PROXY_PORT: '80' }, { unprivileged: true });
    expect(await explicit.exited).toBe(1);
    expect(explicit.lines).toEqual(['start: port 80 needs more privileges; set PROXY_PORT to another port']);
  });

  it('refuses an unknown stack with the list of stacks', async () => {
    const stack = startStack('nope', {});
    expect(await stack.exited).toBe(1);
    expect(stack.lines).toEqual(['start: unknown stack "nope"; choose one of simple, database, two-tier']);
  });
});

describe('npm run serve -- <service>', () => {
  it('runs one service in the foreground with plain node and its own PORT, and exits 0 on SIGTERM', async () => {
    const service = await startListeningProcess({
      label: 'serve simple',
      command: process.execPath,
      args: ['scripts/serve.js', 'simple'],
      env: { PATH: process.env.PATH, NODE_ENV: 'production', PORT: '0', HOST: '127.0.0.1' },
      startedMessage: (port) => startedLine('simple', port),
    });
    expect((await fetch(`${service.baseUrl}/health`)).status).toBe(200);
    expect(await service.stop('SIGTERM')).toBe(0);
  });

  it("serves on another port when the service's default one is taken and PORT is unset, and says where", async () => {
    await occupy(services.simple.port);
    const service = await startListeningProcess({
      label: 'serve simple',
      command: process.execPath,
      args: ['scripts/serve.js', 'simple'],
      env: { PATH: process.env.PATH, NODE_ENV: 'production', HOST: '127.0.0.1' },
      startedMessage: (port) => startedLine('simple', port),
    });
    expect(service.port).not.toBe(services.simple.port);
    expect(service.lines[0]).toBe(
      `serve: port ${services.simple.port} is already in use; simple serves on http://127.0.0.1:${service.port}/ instead (set PORT to choose one)`,
    );
    expect((await fetch(`${service.baseUrl}/health`)).status).toBe(200);
    expect(await service.stop('SIGTERM')).toBe(0);

    // PORT set explicitly is kept: the service refuses it in its own line.
    const child = spawn(process.execPath, ['scripts/serve.js', 'simple'], {
      cwd: repoRoot,
      env: { PATH: process.env.PATH, NODE_ENV: 'production', PORT: String(services.simple.port) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await once(child, 'exit')).toEqual([1, null]);
    expect(stderr).toBe(`simple: port ${services.simple.port} is already in use; set PORT to another port\n`);
  });

  it('refuses an unknown service with the list of services', async () => {
    const child = spawn(process.execPath, ['scripts/serve.js', 'web'], {
      cwd: repoRoot,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    expect(await once(child, 'exit')).toEqual([1, null]);
    expect(stderr).toBe('serve: unknown service "web"; choose one of simple, proxy, database, backend, frontend\n');
  });
});
