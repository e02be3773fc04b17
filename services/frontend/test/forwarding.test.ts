import { createHash } from 'node:crypto';
import { once } from 'node:events';
import { get, type IncomingMessage, type ServerResponse } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { getRaw, sleep, startFakeBackend, startFrontend, type FakeBackend, type Frontend } from './support.js';

const MiB = 1024 * 1024;

/** Users as JSON text, joined by commas. */
function usersText(from: number, count: number): string {
  return Array.from({ length: count }, (_, i) => {
    const id = from + i;
    return `{"id":${id},"name":"User ${id}","email":"user${id}@example.com","created_at":"2026-11-22T10:15:30.123Z"}`;
  }).join(',');
}

/** Pieces of a list, 5 to 15 kB, each of another length, made once: writing them costs the test little. */
const pieces = Array.from({ length: 13 }, (_, k) => Buffer.from(`,${usersText(1 + k * 1000, 50 + k * 8)}`));

interface StreamedList {
  /** Bytes the backend has handed to its socket so far. */
  written: () => number;
  /** sha256 of the whole body, once it is all written. */
  digest: Promise<string>;
  /** Resolves when the response's connection closes, ended or not. */
  closed: Promise<void>;
}

/** Answers with a JSON array of at least `size` bytes, piece by piece, waiting for drain as a well-behaved server does. */
function streamList(res: ServerResponse, size: number, delayMs = 0): StreamedList {
  const hash = createHash('sha256');
  let written = 0;
  const closed = once(res, 'close').then(() => undefined);
  const write = (bytes: Buffer): boolean => {
    hash.update(bytes);
    written += bytes.length;
    return res.write(bytes);
  };
  const digest = (async () => {
    res.writeHead(200, { 'content-type': 'application/json; charset=utf-8' });
    write(Buffer.from(`[${usersText(0, 1)}`));
    for (let i = 0; written < size && !res.destroyed; i++) {
      if (!write(pieces[i % pieces.length]!)) await Promise.race([once(res, 'drain'), closed]);
      if (delayMs > 0) await sleep(delayMs);
    }
    write(Buffer.from(']'));
    res.end();
    return hash.digest('hex');
  })();
  return { written: () => written, digest, closed };
}

describe('the frontend forwards the backend list as a stream', () => {
  let backend: FakeBackend;
  let frontend: Frontend;
  afterEach(async () => {
    await frontend.app.close();
    await backend.close();
  });
  async function start(timeoutMs?: number): Promise<void> {
    backend = await startFakeBackend();
    frontend = await startFrontend(backend.url, timeoutMs);
  }

  it('passes a large body written in many chunks through byte for byte, with only its content type', async () => {
    await start();
    let list: StreamedList | undefined;
    backend.answer((_req, res) => {
      res.setHeader('x-backend-only', 'yes');
      res.setHeader('set-cookie', 'a=b');
      list = streamList(res, 32 * MiB); // twice what the frontend once buffered at most
    });
    const answer = await getRaw(`${frontend.url}/api/users`);
    expect(answer.status).toBe(200);
    expect(answer.complete).toBe(true);
    expect(answer.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(answer.headers['x-backend-only']).toBeUndefined();
    expect(answer.headers['set-cookie']).toBeUndefined();
    expect(answer.body.length).toBe(list!.written());
    expect(createHash('sha256').update(answer.body).digest('hex')).toBe(await list!.digest);
  });

  it('reads the backend no faster than its client: a paused client stalls the backend writes, then gets every byte', async () => {
    await start();
    const size = 200 * MiB;
    let list: StreamedList | undefined;
    backend.answer((_req, res) => void (list = streamList(res, size)));
    const client = get(`${frontend.url}/api/users`, { agent: false });
    const [res] = (await once(client, 'response')) as [IncomingMessage];
    expect(res.statusCode).toBe(200);
    res.pause();
    // Wait until the backend's writes stop: every buffer between it and the paused client is full.
    let before = -1;
    while (list!.written() !== before) {
      before = list!.written();
      await sleep(300);
    }
    // What the sockets and streams on the way hold (8 MB here; loopback buffers may grow to tens
    // of MB elsewhere), far from the body's size.
    expect(list!.written()).toBeLessThan(64 * MiB);
    const hash = createHash('sha256');
    let received = 0;
    res.on('data', (chunk: Buffer) => void ((received += chunk.length), hash.update(chunk)));
    res.resume();
    await once(res, 'end');
    expect(received).toBe(list!.written());
    expect(received).toBeGreaterThan(size);
    expect(hash.digest('hex')).toBe(await list!.digest);
  });

  it('ends the backend request when its client goes away mid-body', async () => {
    await start();
    let list: StreamedList | undefined;
    backend.answer((_req, res) => void (list = streamList(res, 100 * MiB, 5)));
    const client = get(`${frontend.url}/api/users`, { agent: false });
    const [res] = (await once(client, 'response')) as [IncomingMessage];
    expect(res.statusCode).toBe(200);
    await once(res, 'data');
    client.destroy();
    const started = Date.now();
    await list!.closed;
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(list!.written()).toBeLessThan(100 * MiB);
  });

  it('ends the backend request when its client goes away before the backend answers', async () => {
    await start();
    let closed: Promise<unknown> | undefined;
    backend.answer((_req, res) => void (closed = once(res, 'close'))); // never answers
    const client = get(`${frontend.url}/api/users`, { agent: false }).on('error', () => undefined);
    while (closed === undefined) await sleep(10);
    client.destroy();
    const started = Date.now();
    await closed;
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('pagination through the frontend', () => {
  let backend: FakeBackend;
  let frontend: Frontend;
  afterEach(async () => {
    await frontend.app.close();
    await backend.close();
  });

  it('passes limit and after on and forwards the Link header unchanged', async () => {
    backend = await startFakeBackend();
    frontend = await startFrontend(backend.url);
    const link = '</api/users?limit=2&after=7>; rel="next"';
    const page = `[${usersText(6, 2)}]`;
    backend.answer((req, res) => {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', ...(req.url?.includes('limit') ? { link } : {}) }).end(page);
    });
    const answer = await getRaw(`${frontend.url}/api/users?limit=2&after=5`);
    expect(backend.requests).toEqual(['GET /api/users?limit=2&after=5']);
    expect(answer.status).toBe(200);
    expect(answer.headers.link).toBe(link);
    expect(answer.body.toString()).toBe(page);
    const whole = await getRaw(`${frontend.url}/api/users`);
    expect(backend.requests.at(-1)).toBe('GET /api/users');
    expect(whole.headers.link).toBeUndefined();
  });

  it('asks the backend with HEAD for a HEAD, so the list is not read for nothing', async () => {
    backend = await startFakeBackend();
    frontend = await startFrontend(backend.url);
    const res = await fetch(`${frontend.url}/api/users?limit=3`, { method: 'HEAD' });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    expect(backend.requests).toEqual(['HEAD /api/users?limit=3']);
  });

  it.each(['limit=0', 'limit=1001', 'limit=abc', 'limit=1e2', 'after=-1', 'after=2147483648', 'limt=10'])(
    'answers ?%s with 400 JSON naming the parameter, without calling the backend',
    async (query) => {
      backend = await startFakeBackend();
      frontend = await startFrontend(backend.url);
      const answer = await getRaw(`${frontend.url}/api/users?${query}`);
      expect(answer.status).toBe(400);
      expect(answer.headers['content-type']).toMatch(/^application\/json/);
      expect((JSON.parse(answer.body.toString()) as { error: string }).error).toContain(query.split('=')[0]);
      expect(backend.requests).toEqual([]);
    },
  );
});
