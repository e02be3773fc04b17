import { describe, expect, it } from 'vitest';
import { requestTarget } from '../src/request-target.js';

describe('requestTarget', () => {
  it('keeps a path with its query as it is, and the Host header', () => {
    expect(requestTarget('/a%20b/c?q=%zz&r=1', 'web:3000')).toEqual({ path: '/a%20b/c?q=%zz&r=1', host: 'web:3000' });
    expect(requestTarget('/', undefined)).toEqual({ path: '/', host: undefined });
  });

  it('takes the path with its query, and the host with its port, from an absolute URL', () => {
    expect(requestTarget('http://Other.Example:8080/a/b?q=1', 'web')).toEqual({ path: '/a/b?q=1', host: 'other.example:8080' });
    expect(requestTarget('http://other.example', undefined)).toEqual({ path: '/', host: 'other.example' });
  });

  it.each(['*', 'foo', 'ftp://files.example/x'])('refuses %s with 400', (target) => {
    expect(() => requestTarget(target, 'web')).toThrow(
      expect.objectContaining({ statusCode: 400, message: `Request target must be a path or an absolute http URL, got "${target}"` }),
    );
  });

  it.each([
    ['/%zz', '/%zz'],
    ['/a%2?x=1', '/a%2'],
    ['/%ff', '/%ff'],
    ['http://other.example/b%zz?y', '/b%zz'],
  ])('refuses %s, a path that does not decode, with 400', (target, path) => {
    expect(() => requestTarget(target, 'web')).toThrow(
      expect.objectContaining({ statusCode: 400, message: `'${path}' is not a valid url component` }),
    );
  });
});
