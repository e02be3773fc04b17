import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '@sample-services/testing/prometheus-text';
import { isConnectionLost, isUnreachable, upstreamErrorCounter, upstreamErrorKind } from '../src/upstream-errors.js';

const withCode = (code: string): Error => Object.assign(new Error(code), { code });

/** [isUnreachable, isConnectionLost, upstreamErrorKind] of an error with this code. */
const rules = (error: unknown): [boolean, boolean, string] => [isUnreachable(error), isConnectionLost(error), upstreamErrorKind(error)];

describe('what an upstream error code means', () => {
  it.each(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'ENETDOWN', 'EADDRNOTAVAIL'])(
    '%s: the address cannot be reached, refused',
    (code) => {
      expect(rules(withCode(code))).toEqual([true, false, 'refused']);
    },
  );

  it.each(['ETIMEDOUT', 'UND_ERR_CONNECT_TIMEOUT'])('%s: the address cannot be reached, a timeout', (code) => {
    expect(rules(withCode(code))).toEqual([true, false, 'timeout']);
  });

  it.each(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET'])('%s: the connection was lost, reset', (code) => {
    expect(rules(withCode(code))).toEqual([false, true, 'reset']);
  });

  // A slow answer is not sent again elsewhere; a name that does not resolve leaves no address to pass over.
  it.each([
    ['UND_ERR_HEADERS_TIMEOUT', 'timeout'],
    ['UND_ERR_BODY_TIMEOUT', 'timeout'],
    ['ENOTFOUND', 'refused'],
    ['EAI_AGAIN', 'refused'],
  ])('%s: neither, %s', (code, kind) => {
    expect(rules(withCode(code))).toEqual([false, false, kind]);
  });

  // A garbled answer, our own 413 or an aborted call: neither, and of no kind of its own.
  it.each(['HPE_INVALID_CONSTANT', 'UND_ERR_ABORTED', 'DEPTH_ZERO_SELF_SIGNED_CERT'])('%s: neither, other', (code) => {
    expect(rules(withCode(code))).toEqual([false, false, 'other']);
  });

  it('neither, other, for an error without a code', () => {
    expect([rules(new Error('?')), rules(null), rules(Object.assign(new Error('x'), { statusCode: 413 })), rules({ code: 61 })]).toEqual(
      Array(4).fill([false, false, 'other']),
    );
  });
});

describe('upstreamErrorCounter', () => {
  const value = async (registry: Registry, kind: string): Promise<number | undefined> =>
    sampleValue(parsePrometheusText(await registry.metrics()), 'upstream_errors_total', { kind });

  it('shows every kind at 0 from its first call, and counts into one counter per registry', async () => {
    const registry = new Registry();
    const first = upstreamErrorCounter(registry);
    const again = upstreamErrorCounter(registry);
    expect(await Promise.all(['refused', 'timeout', 'reset', 'bad_status', 'other'].map((kind) => value(registry, kind)))).toEqual([
      0, 0, 0, 0, 0,
    ]);
    first('timeout');
    again('timeout');
    again('bad_status');
    expect([await value(registry, 'timeout'), await value(registry, 'bad_status'), await value(registry, 'reset')]).toEqual([2, 1, 0]);
    // Another registry has a counter of its own.
    const other = new Registry();
    upstreamErrorCounter(other)('reset');
    expect([await value(other, 'reset'), await value(registry, 'reset')]).toEqual([1, 0]);
  });
});
