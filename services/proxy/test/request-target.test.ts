import { describe, expect, it } from 'vitest';
import { absoluteFormTarget } from '../src/request-target.js';

describe('absoluteFormTarget', () => {
  it('takes the path with its query, and the host with its port, from an absolute URL', () => {
    expect(absoluteFormTarget('http://Other.Example:8080/a/b?q=1')).toEqual({ path: '/a/b?q=1', host: 'other.example:8080' });
    expect(absoluteFormTarget('http://other.example')).toEqual({ path: '/', host: 'other.example' });
  });

  it.each(['*', 'foo', 'ftp://files.example/x'])('refuses %s with 400', (target) => {
    expect(() => absoluteFormTarget(target)).toThrow(
      expect.objectContaining({ statusCode: 400, message: `Request target must be a path or an absolute http URL, got "${target}"` }),
    );
  });
});
