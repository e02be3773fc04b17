import { describe, expect, it } from 'vitest';
import { isConnectionLost, isUnreachable } from '../src/connection-errors.js';

const withCode = (code: string): Error => Object.assign(new Error(code), { code });

describe('isUnreachable and isConnectionLost', () => {
  it.each(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EADDRNOTAVAIL', 'ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT'])(
    '%s: the address cannot be reached',
    (code) => {
      expect([isUnreachable(withCode(code)), isConnectionLost(withCode(code))]).toEqual([true, false]);
    },
  );

  it.each(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET'])('%s: the connection was lost', (code) => {
    expect([isUnreachable(withCode(code)), isConnectionLost(withCode(code))]).toEqual([false, true]);
  });

  // A slow or garbled answer, or our own 413, is not sent again elsewhere.
  it.each(['UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT', 'HPE_INVALID_CONSTANT', 'UND_ERR_ABORTED'])('%s: neither', (code) => {
    expect([isUnreachable(withCode(code)), isConnectionLost(withCode(code))]).toEqual([false, false]);
  });

  it('neither for an error without a code', () => {
    expect([
      isUnreachable(new Error('?')),
      isConnectionLost(null),
      isUnreachable(Object.assign(new Error('x'), { statusCode: 413 })),
    ]).toEqual([false, false, false]);
  });
});
