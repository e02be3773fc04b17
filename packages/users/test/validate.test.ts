import { describe, expect, it } from 'vitest';
import { parseNewUser, REQUIRED_MESSAGE } from '../src/index.js';
import { EMAIL_DOMAIN_MESSAGE, EMAIL_LOCAL_MESSAGE } from '../src/validate.js';

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
    // Found by an API fuzzer: each was stored and listed back.
    [{ name: 'A', email: 'a@.io' }, EMAIL_DOMAIN_MESSAGE],
    [{ name: 'A', email: '-@-' }, EMAIL_DOMAIN_MESSAGE],
    [{ name: 'A', email: 'a..b@x.io' }, EMAIL_LOCAL_MESSAGE],
    [{ name: 'A', email: 'a<b@x.io' }, EMAIL_LOCAL_MESSAGE],
    [{ name: 'A', email: '(c)a@x.io' }, EMAIL_LOCAL_MESSAGE],
    [{ name: 'A', email: '.a@x.io' }, EMAIL_LOCAL_MESSAGE],
    [{ name: 'A', email: 'a@x.io.' }, EMAIL_DOMAIN_MESSAGE],
    [{ name: 'A', email: 'a@-x.io' }, EMAIL_DOMAIN_MESSAGE],
    [{ name: 'A', email: `a@${'x'.repeat(64)}.io` }, EMAIL_DOMAIN_MESSAGE],
    [{ name: 'A\u0000B', email: 'a@b.c' }, 'name must not contain NUL characters'],
    [{ name: 'A', email: 'a\u0000@b.c' }, 'email must not contain NUL characters'],
    [{ name: 'A\ud800', email: 'a@b.c' }, 'name must be valid Unicode text'],
  ])('rejects %j with a specific message', (body, error) => {
    expect(parseNewUser(body)).toEqual({ ok: false, error });
  });

  it.each([
    'a@b.c',
    'john.doe+tag@example.com',
    "o'neil!#$%&*/=?^_`{|}~-@sub-domain.example.org",
    'élise@exämple.fr',
    '李@例子.中国',
    'user@localhost',
    `a@${'x'.repeat(63)}.io`,
  ])('accepts the email %s', (email) => {
    expect(parseNewUser({ name: 'A', email })).toEqual({ ok: true, user: { name: 'A', email } });
  });

  it('trims surrounding whitespace, counts characters not UTF-16 units, and ignores other fields', () => {
    const name = '🙂'.repeat(100); // 200 UTF-16 units, 100 characters
    expect(parseNewUser({ name: `  ${name}\n`, email: ' a@b.c ', admin: true })).toEqual({
      ok: true,
      user: { name, email: 'a@b.c' },
    });
  });
});
