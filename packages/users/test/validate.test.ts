import { describe, expect, it } from 'vitest';
import { parseNewUser, REQUIRED_MESSAGE } from '../src/index.js';

describe('parseNewUser', () => {
  it.each([
    ['no body', undefined],
    ['null', null],
    ['an array', [{ name: 'A', email: 'a@b.c' }]],
    ['a string', 'name=A'],
    ['a number', 42],
    ['an empty object', {}],
    ['no email', { name: 'A' }],
    ['no name', { email: 'a@b.c' }],
    ['an empty name', { name: '', email: 'a@b.c' }],
    ['a blank email', { name: 'A', email: ' \t\n ' }],
    ['a null name', { name: null, email: 'a@b.c' }],
  ])('answers the original message for %s', (_case, body) => {
    expect(parseNewUser(body)).toEqual({ ok: false, error: REQUIRED_MESSAGE });
  });

  it.each([
    [{ name: 42, email: 'a@b.c' }, 'name must be a string'],
    [{ name: 'A', email: ['a@b.c'] }, 'email must be a string'],
    [{ name: true, email: 7 }, 'name must be a string'],
    [{ name: 'x'.repeat(101), email: 'a@b.c' }, 'name must be at most 100 characters'],
    [{ name: 'A', email: `${'x'.repeat(115)}@b.com` }, 'email must be at most 120 characters'],
    [{ name: 'A', email: 'no-at-sign' }, 'email must be of the form local@domain'],
    [{ name: 'A', email: 'a@b@c' }, 'email must be of the form local@domain'],
    [{ name: 'A', email: 'a b@c.d' }, 'email must be of the form local@domain'],
    [{ name: 'A', email: '@c.d' }, 'email must be of the form local@domain'],
    [{ name: 'A\u0000B', email: 'a@b.c' }, 'name must not contain NUL characters'],
    [{ name: 'A', email: 'a\u0000@b.c' }, 'email must not contain NUL characters'],
    [{ name: 'A\ud800', email: 'a@b.c' }, 'name must be valid Unicode text'],
  ])('rejects %j with a specific message', (body, error) => {
    expect(parseNewUser(body)).toEqual({ ok: false, error });
  });

  it('trims surrounding whitespace, counts characters not UTF-16 units, and ignores other fields', () => {
    const name = '🙂'.repeat(100); // 200 UTF-16 units, 100 characters
    expect(parseNewUser({ name: `  ${name}\n`, email: ' a@b.c ', admin: true })).toEqual({
      ok: true,
      user: { name, email: 'a@b.c' },
    });
  });
});
