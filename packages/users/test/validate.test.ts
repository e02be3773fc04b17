import { describe, expect, it } from 'vitest';
import { parseNewUser, REQUIRED_MESSAGE } from '../src/index.js';
import { EMAIL_DOMAIN_MESSAGE, EMAIL_LOCAL_MESSAGE, EMAIL_PATTERN, NAME_PATTERN, TRIMMED_CHARACTERS } from '../src/validate.js';

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
    const name = '🙂'.repeat(98); // 196 UTF-16 units, 98 characters
    expect(parseNewUser({ name: ` ${name}\n`, email: ' a@b.c ', admin: true })).toEqual({
      ok: true,
      user: { name, email: 'a@b.c' },
    });
  });

  it('counts the lengths as sent, as the documented maxLength does, whitespace included', () => {
    expect(parseNewUser({ name: ` ${'x'.repeat(100)}`, email: 'a@b.c' })).toEqual({
      ok: false,
      error: 'name must be at most 100 characters',
    });
    expect(parseNewUser({ name: 'A', email: `${'x'.repeat(114)}@b.com ` })).toEqual({
      ok: false,
      error: 'email must be at most 120 characters',
    });
  });
});

describe('the documented patterns of NewUserBody', () => {
  const everyCodePoint = Array.from({ length: 0x110000 }, (_, codePoint) => codePoint).filter((c) => c < 0xd800 || c > 0xdfff);

  it('list exactly the characters trim removes', () => {
    const documented = new RegExp(`^[${TRIMMED_CHARACTERS}]$`, 'u');
    const trimmed = everyCodePoint.filter((c) => String.fromCodePoint(c).trim() === '');
    expect(everyCodePoint.filter((c) => documented.test(String.fromCodePoint(c)))).toEqual(trimmed);
  });

  // The server's answer and the document must agree on every value, or a client (or a
  // request generator) that follows the document gets a 400, or one that breaks it a 201.
  const emails = [
    'a@b.c',
    ' \u00a0a@b.c\ufeff\u2028',
    'élise@exämple.fr',
    '李@例子.中国',
    "o'neil!#$%&*/=?^_`{|}~-@sub-domain.example.org",
    `a@${'x'.repeat(63)}.io`,
    `a@${'x'.repeat(64)}.io`,
    '\u001ca@b.c',
    'a@b.c\u0085',
    'a b@c.d',
    'a@b@c',
    '@c.d',
    'a@.io',
    '-@-',
    'a..b@x.io',
    '.a@x.io',
    'a@x.io.',
    'a@-x.io',
    'a<b@x.io',
    'a\u0000@b.c',
    'a\u0301@b\u0663.c',
    'ü☃@例子.中国',
    '"quoted"@x.io',
    'a@b_c.io',
    'a@b\u20fe.io',
  ];
  it.each(emails)('EMAIL_PATTERN says of %j what parseNewUser says', (email) => {
    expect(new RegExp(EMAIL_PATTERN, 'u').test(email)).toBe(parseNewUser({ name: 'A', email }).ok);
  });

  const names = ['A', '  Ada ', '\u3000', ' \t\n', '\ufeffA', '\u001c', 'A\u0000B', '\u0000', '🙂', '\u200b'];
  it.each(names)('NAME_PATTERN says of %j what parseNewUser says', (name) => {
    expect(new RegExp(NAME_PATTERN, 'u').test(name)).toBe(parseNewUser({ name, email: 'a@b.c' }).ok);
  });
});
