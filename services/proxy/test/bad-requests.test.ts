import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { sendRaw } from '@sample-services/testing/http-request';
import { proxyOnEchoUpstream } from './support.js';

/** The longest log line these requests may cause: an error's own words, never a library's source. */
const MAX_LINE = 2_000;

// nginx's answers to these are in the shared contract (proxy-errors.ts); here, the TypeScript proxy's
// own words, a Host nginx lets through but the upstream client cannot send, and its log lines.
describe('requests the proxy refuses, over a socket', () => {
  const lines: string[] = [];
  const proxy = proxyOnEchoUpstream(pino({ level: 'info' }, { write: (line: string) => void lines.push(line) }));

  it.each([
    ['an unclosed IP literal as Host', 'GET / HTTP/1.1\r\nHost: [x', '', 400, 'Bad request: malformed Host header'],
    ['a Host with a path', 'GET / HTTP/1.1\r\nHost: evil.com/x', '', 400, 'Bad request: malformed Host header'],
    ['two Host lines', 'GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test', '', 400, 'Bad request: more than one Host header'],
    [
      'a Transfer-Encoding other than chunked',
      'POST / HTTP/1.1\r\nHost: a.test\r\nTransfer-Encoding: gzip, chunked',
      '3\r\nabc\r\n0\r\n\r\n',
      501,
      'Not implemented: a Transfer-Encoding other than chunked',
    ],
  ])('answers %s with JSON, without reaching the upstream', async (_case, head, body, status, error) => {
    const before = proxy.upstream().requests;
    const answer = await sendRaw(proxy.baseUrl(), head, body);
    expect(answer).toMatch(new RegExp(`^HTTP/1\\.1 ${status} `));
    expect(answer).toMatch(/\r\ncontent-type: application\/json/i);
    expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error });
    expect(proxy.upstream().requests).toBe(before);
  });

  it('logs no line of a library assertion or source, and none longer than an error of its own', () => {
    expect(lines.length).toBeGreaterThan(0);
    expect(lines.filter((line) => line.length > MAX_LINE || /assert/i.test(line))).toEqual([]);
  });
});
