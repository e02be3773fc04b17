import { describe, expect, it } from 'vitest';
import { fetchFailedLine as fetchFailed, getRaw, jsonHeaders as json, useFrontendOnFakeBackend, type Answer } from './support.js';

const cut = 'the backend failed mid-body: the response is cut';

describe('the frontend when the backend fails', () => {
  const under = useFrontendOnFakeBackend();
  const { start } = under;
  const messages = (): string[] => under.frontend.logged().map((line) => line.msg);

  describe('before the body starts: 500 JSON and one log line with the cause', () => {
    async function expect500(cause: RegExp): Promise<void> {
      const started = Date.now();
      const answer = await getRaw(`${under.frontend.url}/api/users`);
      expect(answer.status).toBe(500);
      expect(answer.body.toString()).toBe('{"error":"Failed to fetch users"}');
      expect(Date.now() - started).toBeLessThan(3_000);
      const lines = under.frontend.logged().filter((line) => line.msg === fetchFailed);
      expect(lines).toHaveLength(1);
      expect(`${lines[0]?.err?.type}: ${lines[0]?.err?.message}`).toMatch(cause);
    }

    it('connection refused', async () => {
      await start(() => undefined);
      await under.backend.close();
      await expect500(/ECONNREFUSED/);
    });

    it.each<[string, Answer, RegExp]>([
      ['a non-2xx status', (_req, res) => res.writeHead(503, json).end('{"error":"Database unavailable"}'), /backend answered 503/],
      [
        'a content type other than JSON',
        (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<h1>[]</h1>'),
        /text\/html.*JSON/,
      ],
      ['no content type', (_req, res) => res.writeHead(200).end('[]'), /no content type.*JSON/],
      [
        'a JSON-looking content type that is not JSON',
        (_req, res) => res.writeHead(200, { 'content-type': 'application/jsonx' }).end('[]'),
        /JSON/,
      ],
      [
        'headers, then a cut before the first body byte',
        (_req, res) => void (res.writeHead(200, json).flushHeaders(), setTimeout(() => res.destroy(), 50)),
        /SocketError|closed/,
      ],
    ])('%s', async (_case, answer, cause) => {
      await start(answer);
      await expect500(cause);
    });

    it('no headers within BACKEND_TIMEOUT_MS', async () => {
      await start(() => undefined, 300);
      await expect500(/HeadersTimeoutError/);
    });

    it('headers, then no body byte within BACKEND_TIMEOUT_MS', async () => {
      await start((_req, res) => res.writeHead(200, json).flushHeaders(), 300);
      await expect500(/BodyTimeoutError/);
    });
  });

  describe('mid-body: the response is cut (never a shorter valid list) and the cause logged once', () => {
    const begin: Answer = (_req, res) => {
      res.writeHead(200, json);
      res.write('[{"id":1,"name":"A","email":"a@b.c","created_at":"2026-11-22T10:15:30.123Z"}');
    };

    it('when the backend cuts the connection', async () => {
      await start((req, res) => {
        begin(req, res);
        setTimeout(() => res.destroy(), 100);
      });
      const answer = await getRaw(`${under.frontend.url}/api/users`);
      expect(answer.status).toBe(200);
      expect(answer.complete).toBe(false);
      expect(answer.body.toString()).toMatch(/^\[\{"id":1,/);
      await expect.poll(() => messages().filter((m) => m === cut), { timeout: 5_000 }).toHaveLength(1);
      expect(messages()).not.toContain(fetchFailed);
    });

    it('when the backend goes idle mid-body beyond BACKEND_TIMEOUT_MS, while an idle time below it is fine', async () => {
      let finishes = true;
      await start((req, res) => {
        begin(req, res);
        if (finishes) setTimeout(() => res.end(']'), 150); // a pause under the timeout: a whole answer
      }, 400);
      const whole = await getRaw(`${under.frontend.url}/api/users`);
      expect(whole.complete).toBe(true);
      expect(JSON.parse(whole.body.toString())).toHaveLength(1);
      finishes = false;
      const started = Date.now();
      const answer = await getRaw(`${under.frontend.url}/api/users`);
      expect(answer.status).toBe(200);
      expect(answer.complete).toBe(false);
      expect(Date.now() - started).toBeLessThan(3_000);
      await expect.poll(() => under.frontend.logged().filter((line) => line.msg === cut), { timeout: 5_000 }).toHaveLength(1);
      const lines = under.frontend.logged().filter((line) => line.msg === cut);
      expect(lines[0]?.err?.type).toBe('BodyTimeoutError');
    });
  });
});
