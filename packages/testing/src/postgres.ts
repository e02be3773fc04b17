import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server, type Socket } from 'node:net';
import { tmpdir, userInfo } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { freePort } from './free-port.js';

const run = promisify(execFile);

export interface TestPostgres {
  /** URL of the cluster's `postgres` database (trust authentication, so no password). */
  url: string;
  /** A fresh empty database on the cluster, so suites never see each other's rows. */
  createDatabase: () => Promise<string>;
  /** Stops the server (fast shutdown: connections are cut), for the database-down cases. */
  stop: () => Promise<void>;
  /** Starts it again on the same port with the same data. */
  start: () => Promise<void>;
  /** Stops the server and removes its directory. */
  destroy: () => Promise<void>;
}

function binDir(): string | undefined {
  if (process.env.PG_BIN !== undefined) return process.env.PG_BIN;
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const newest = readdirSync(root).sort((a, b) => Number(b) - Number(a))[0];
  return newest === undefined ? undefined : join(root, newest, 'bin');
}

/** Local only, in the temporary directory; durability is not needed for throwaway data. */
function serverOptions(port: number, dir: string): string {
  return `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off`;
}

function adminUrl(port: number, database: string): string {
  return `postgresql://postgres@127.0.0.1:${port}/${database}`;
}

/** Creates a database with a unique name through the given admin URL and returns its URL. */
async function createDatabaseAt(url: string): Promise<string> {
  const name = `test_${process.pid}_${Date.now()}_${Math.floor(Math.random() * 1e6)}`;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
  const target = new URL(url);
  target.pathname = `/${name}`;
  return target.href;
}

/**
 * A throwaway PostgreSQL cluster in a temporary directory on a free port. PostgreSQL refuses
 * to run as root, so as root its commands run as the `postgres` user via runuser.
 */
export async function startLocalPostgres(): Promise<TestPostgres> {
  const bin = binDir();
  if (bin === undefined || !existsSync(join(bin, 'initdb'))) throw new Error('initdb not found (set PG_BIN to the directory holding it)');
  const asRoot = userInfo().uid === 0;
  const dir = mkdtempSync(join(tmpdir(), 'svc-pg-'));
  const pgCommand = async (command: string, args: string[]): Promise<void> => {
    const [file, argv] = asRoot ? ['runuser', ['-u', 'postgres', '--', join(bin, command), ...args]] : [join(bin, command), args];
    await run(file, argv, { cwd: dir, timeout: 60_000 });
  };
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    chownSync(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = join(dir, 'data');
  let port = 0;
  const start = (): Promise<void> =>
    pgCommand('pg_ctl', ['start', '-w', '-t', '30', '-D', data, '-l', join(dir, 'server.log'), '-o', serverOptions(port, dir)]);
  const stop = (): Promise<void> => pgCommand('pg_ctl', ['stop', '-w', '-m', 'fast', '-D', data]);
  try {
    await pgCommand('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync', '--no-instructions']);
    // Another test file may take the free port between our probe and the server's bind: try again.
    for (let attempt = 1; ; attempt++) {
      port = await freePort();
      try {
        await start();
        break;
      } catch (error) {
        if (attempt === 3) throw error;
      }
    }
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  const url = adminUrl(port, 'postgres');
  return {
    url,
    createDatabase: () => createDatabaseAt(url),
    stop,
    start,
    destroy: async () => {
      await pgCommand('pg_ctl', ['stop', '-w', '-m', 'immediate', '-D', data]).catch(() => undefined);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * PostgreSQL for a test file: TEST_DATABASE_URL when given (a server someone else runs, so it
 * cannot be stopped), otherwise a throwaway local cluster. When neither is possible the
 * PostgreSQL tests skip with a visible message, except under CI=true where that is a failure.
 * `needsControl` asks for a local cluster even when TEST_DATABASE_URL is set (stop and start).
 */
export async function usePostgres(needsControl = false): Promise<TestPostgres | undefined> {
  const external = process.env.TEST_DATABASE_URL;
  if (external !== undefined && external !== '' && !needsControl) {
    const unsupported = async (): Promise<void> => {
      throw new Error('TEST_DATABASE_URL points at a server these tests do not control');
    };
    return {
      url: external,
      createDatabase: () => createDatabaseAt(external),
      stop: unsupported,
      start: unsupported,
      destroy: async () => undefined,
    };
  }
  try {
    return await startLocalPostgres();
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    if (process.env.CI === 'true') throw new Error(`PostgreSQL is required under CI=true but could not be started: ${reason}`);
    console.warn(`\n*** PostgreSQL tests SKIPPED: cannot start a local PostgreSQL (${reason}) ***\n`);
    return undefined;
  }
}

/** A server that accepts connections and never answers: a PostgreSQL server that hangs. */
export async function startSilentServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const sockets = new Set<Socket>();
  const server: Server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `postgresql://user:password@127.0.0.1:${port}/db`,
    close: async () => {
      sockets.forEach((socket) => socket.destroy());
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
