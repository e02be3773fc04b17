import { randomBytes } from 'node:crypto';
import { expect, it } from 'vitest';
import type { EchoedRequest } from '../echo-upstream.js';
import { clientTrusting, type Client, type Received } from '../http-request.js';
import type { ProxyContractOptions } from './proxy.js';

const MiB = 1024 * 1024;

function expectJsonError(res: Received, status: number, error: string): void {
  expect(res.status).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.json()).toEqual({ error });
}

/** The status, content type and body of an answer to a request written byte for byte (see sendRaw). */
async function answerRaw(
  { sendRaw }: Client,
  baseUrl: string,
  head: string,
  body?: string,
): Promise<{ status: number; type: string; body: string }> {
  const answer = await sendRaw(baseUrl, head, body);
  const headEnd = answer.indexOf('\r\n\r\n');
  return {
    status: Number(/^HTTP\/1\.1 (\d{3}) /.exec(answer)?.[1]),
    type: /^content-type: *(.*)$/im.exec(answer.slice(0, headEnd))?.[1] ?? '',
    body: answer.slice(headEnd + 4),
  };
}

/** The proxy's own answers (spec 4.4 error cases), run by proxyContract. */
export function proxyErrorContract({ baseUrl, upstream, trust }: ProxyContractOptions): void {
  const client = clientTrusting(trust);
  const { send } = client;
  it('answers 413 JSON for a body over 1 MiB, without reaching the upstream', async () => {
    const before = upstream().requests;
    const res = await send(baseUrl(), { method: 'POST', path: '/upload', body: randomBytes(MiB + 1) });
    expectJsonError(res, 413, 'Request body is too large');
    expect(upstream().requests).toBe(before);
  });

  it('answers 413 JSON for a chunked body that grows over 1 MiB', async () => {
    const res = await send(baseUrl(), { method: 'POST', path: '/upload', body: Array.from({ length: 9 }, () => randomBytes(MiB / 8)) });
    expectJsonError(res, 413, 'Request body is too large');
  });

  it('cuts the response short for the client when the upstream fails halfway through it', async () => {
    await expect(send(baseUrl(), { path: `/download?download=${MiB}&cut` })).rejects.toThrow();
  });

  it('answers 400 JSON for a path that cannot be decoded, without reaching the upstream', async () => {
    const before = upstream().requests;
    const res = await send(baseUrl(), { path: '/%zz' });
    expect(res.status).toBe(400);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ error: expect.any(String) });
    expect(upstream().requests).toBe(before);
  });

  // What nginx refuses before proxying (its ngx_http_validate_host and header checks), the TypeScript proxy refuses too.
  it.each([
    ['a path in the Host header', 'Host: evil.example/x'],
    ['two Host headers', 'Host: one.example\r\nHost: two.example'],
  ])('answers 400 JSON for %s, without reaching the upstream', async (_case, hostLines) => {
    const before = upstream().requests;
    const res = await answerRaw(client, baseUrl(), `GET /host HTTP/1.1\r\n${hostLines}`);
    expect([res.status, res.type]).toEqual([400, expect.stringMatching(/^application\/json/)]);
    expect(JSON.parse(res.body)).toEqual({ error: expect.any(String) });
    expect(upstream().requests).toBe(before);
  });

  it('answers 501 JSON for a Transfer-Encoding other than chunked, without reaching the upstream', async () => {
    const before = upstream().requests;
    const res = await answerRaw(
      client,
      baseUrl(),
      'POST /te HTTP/1.1\r\nHost: te.example\r\nTransfer-Encoding: gzip, chunked',
      '0\r\n\r\n',
    );
    expect([res.status, res.type]).toEqual([501, expect.stringMatching(/^application\/json/)]);
    expect(JSON.parse(res.body)).toEqual({ error: 'Not implemented: a Transfer-Encoding other than chunked' });
    expect(upstream().requests).toBe(before);
  });

  it('answers 502 JSON when the upstream closes the connection instead of answering', async () => {
    expectJsonError(await send(baseUrl(), { path: '/x?reset' }), 502, 'Bad gateway: upstream unavailable');
  });

  it('answers 502 JSON while the upstream is down, and recovers when it is back', async () => {
    await upstream().goDown();
    try {
      expectJsonError(await send(baseUrl(), { path: '/down' }), 502, 'Bad gateway: upstream unavailable');
      expectJsonError(
        await send(baseUrl(), { method: 'POST', path: '/down', body: Buffer.from('{}') }),
        502,
        'Bad gateway: upstream unavailable',
      );
    } finally {
      await upstream().comeUp();
    }
    const back = await send(baseUrl(), { path: '/up' });
    expect(back.status).toBe(200);
    expect((back.json() as EchoedRequest).url).toBe('/up');
  });

  it('answers 504 JSON when the upstream does not answer in time', async () => {
    try {
      expectJsonError(await send(baseUrl(), { path: '/slow?hang' }), 504, 'Gateway timeout: upstream did not answer in time');
    } finally {
      upstream().releaseHanging();
    }
  });
}
