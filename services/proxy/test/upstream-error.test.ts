import { HttpError } from '@sample-services/kit/errors';
import { describe, expect, it } from 'vitest';
import { upstreamFailure } from '../src/upstream-error.js';

const withCode = (code: string): Error => Object.assign(new Error(code), { code });

describe('upstreamFailure', () => {
  it.each(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT'])('%s is 504', (code) => {
    const error = upstreamFailure(withCode(code));
    expect([error.statusCode, error.message]).toEqual([504, 'Gateway timeout: upstream did not answer in time']);
  });

  it.each(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_SOCKET', 'HPE_INVALID_CONSTANT'])('%s is 502', (code) => {
    const cause = withCode(code);
    const error = upstreamFailure(cause);
    expect([error.statusCode, error.message]).toEqual([502, 'Bad gateway: upstream unavailable']);
    expect(error.cause).toBe(cause);
  });

  it('is 502 for an error without a code, and keeps an HttpError of our own', () => {
    expect(upstreamFailure(new Error('?')).statusCode).toBe(502);
    expect(upstreamFailure(null).statusCode).toBe(502);
    const own = new HttpError(413, 'Request body is too large');
    expect(upstreamFailure(own)).toBe(own);
  });

  it("keeps the name, code and opening words of a cause with a long message, as a library's assertion quoting its source", () => {
    const assertion = Object.assign(new Error(`The expression evaluated to a falsy value:\n\n  ${'x'.repeat(100_000)}`), {
      name: 'AssertionError',
      code: 'ERR_ASSERTION',
    });
    const cause = upstreamFailure(assertion).cause as Error;
    expect(cause.name).toBe('AssertionError ERR_ASSERTION');
    expect(cause.message).toMatch(/^The expression evaluated to a falsy value/);
    expect(cause.message.length).toBeLessThan(400);
    expect(cause.stack?.length).toBeLessThan(2_000);
  });
});
