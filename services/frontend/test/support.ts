/** A fake backend and a frontend in front of it, for the frontend's forwarding tests. */
import { once } from 'node:events';
import { createServer, get, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { Writable } from 'node:stream';
import type { App } from '@sample-services/kit/server';
import { pino } from 'pino';
import { afterEach } from 'vitest';
import { createFrontendApp } from '../src/app.js';
import { createBackendClient } from '../src/backend-client.js';

export type Answer = (req: IncomingMessage, res: ServerResponse) => void;

export interface FakeBackend {
  url: string;
  /** Method and path with query of every request it received. */
  requests: string[];
  /** What it answers from now on. */
  answer: (handler: Answer) => void;
  close: () => Promise<void>;
}

/** A node:http server on an ephemeral port whose answer each test chooses. */
export async function startFakeBackend(): Promise<FakeBackend> {
  const requests: string[] = [];
  let handler: Answer = (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    handler(req, res);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer: (next) => void (handler = next),
    close: async () => {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

export interface Frontend {
  url: string;
  app: App;
  /** The JSON lines it logged. */
  logged: () => { msg: string; err?: { type?: string; message?: string } }[];
}

/** The frontend app listening on an ephemeral port, in front of `backendUrl`; `level` the least its log keeps. */
export async function startFrontend(backendUrl: string, timeoutMs = 5_000, level = 'info'): Promise<Frontend> {
  const chunks: string[] = [];
  const stream = new Writable({ write: (chunk: Buffer, _encoding, done) => done(void chunks.push(chunk.toString())) });
  const logger = pino({ level }, stream);
  const app = createFrontendApp({ logger, backend: createBackendClient({ url: new URL(backendUrl), timeoutMs, log: logger }) });
  const url = await app.listen({ port: 0, host: '127.0.0.1' });
  const logged = () =>
    chunks
      .join('')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => JSON.parse(line) as ReturnType<Frontend['logged']>[number]);
  return { url, app, logged };
}

export interface RawAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** False when the connection closed before the end of the body (a cut chunked response). */
  complete: boolean;
}

/** GET over node:http, which tells a complete body from a cut one (fetch only rejects). */
export function getRaw(url: string): Promise<RawAnswer> {
  return new Promise((resolve, reject) => {
    get(url, { agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('error', () => undefined); // a cut body: reported as complete: false
      res.on('close', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), complete: res.complete }),
      );
    }).on('error', reject);
  });
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** The fake backends' JSON content type. */
export const jsonHeaders = { 'content-type': 'application/json' };
/** The frontend's error line when a users call fails before the body starts. */
export const fetchFailedLine = 'could not fetch users from the backend';

export interface FrontendOnFakeBackend {
  /** Starts both for the current test: the backend answers every request with `answer`. */
  start: (answer: Answer, timeoutMs?: number, level?: string) => Promise<void>;
  readonly backend: FakeBackend;
  readonly frontend: Frontend;
}

/** For each test of the calling describe: a fake backend and a frontend in front of it, closed after the test. */
export function useFrontendOnFakeBackend(): FrontendOnFakeBackend {
  let backend: FakeBackend | undefined;
  let frontend: Frontend | undefined;
  afterEach(async () => {
    await frontend?.app.close();
    await backend?.close();
    frontend = backend = undefined;
  });
  const started = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('start() was not called in this test');
    return value;
  };
  return {
    async start(answer, timeoutMs = 5_000, level = 'info') {
      backend = await startFakeBackend();
      backend.answer(answer);
      frontend = await startFrontend(backend.url, timeoutMs, level);
    },
    get backend() {
      return started(backend);
    },
    get frontend() {
      return started(frontend);
    },
  };
}
