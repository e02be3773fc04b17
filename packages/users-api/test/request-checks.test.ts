import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { EMAIL_DOMAIN_MESSAGE, EMAIL_LOCAL_MESSAGE, REQUIRED_MESSAGE, userRequestChecks } from '../src/request-checks.js';
import { EMAIL_PATTERN, NAME_PATTERN, TRIMMED_CHARACTERS } from '../src/text-patterns.js';
import { ListQuery, NewUserBody } from '../src/schemas.js';
import { checkedSchema, EMAIL_INVISIBLE_MESSAGE } from '../src/request-checks.js';
import { BLANK_PATTERN, INVISIBLE_CHARACTERS } from '../src/text-patterns.js';

/** A part of a request as a route with userRequestChecks checks it: undefined when it passes, else the 400's message. */
function checker(schema: object, part: 'body' | 'querystring'): (data: unknown) => string | undefined {
  const validate = userRequestChecks.validatorCompiler({ schema, method: 'GET', url: '/api/users', httpPart: part });
  return (data) => {
    if (validate(data) === true) return undefined;
    const error = userRequestChecks.schemaErrorFormatter(validate.errors ?? [], part);
    expect(error).toMatchObject({ statusCode: 400 });
    return error.message;
  };
}

describe('the schemas checked', () => {
  // The checks compile them without validating them (validateSchema: false): this is where they are.
  it.each([
    ['NewUserBody', NewUserBody, 'body'],
    ['ListQuery', ListQuery, 'querystring'],
  ] as const)('%s, as the %s is checked, is valid JSON Schema', (_name, schema, part) => {
    const ajv = new Ajv({ strict: false });
    expect(ajv.validateSchema(checkedSchema(schema, part)), ajv.errorsText()).toBe(true);
    expect(ajv.validateSchema({ type: 'object', properties: { name: { type: 'strin' } } })).toBe(false);
  });
});

const bodyError = checker(NewUserBody, 'body');
const queryError = checker(ListQuery, 'querystring');

describe('NewUserBody, checked', () => {
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
    // Rule 1 of spec 4.2 before any other: the other field's wrong type does not hide it.
    ['an empty email beside a numeric name', { name: 42, email: '' }],
    ['a null email beside a numeric name', { name: 7, email: null }],
    ['a blank name beside an over-long email', { name: '\u3000', email: 'x'.repeat(200) }],
    // Nothing visible is blank: invisible characters alone, or among whitespace.
    ['a name of a zero-width space', { name: '\u200b', email: 'a@b.c' }],
    ['a name of whitespace and a zero-width space', { name: ' \u200b\t', email: 'a@b.c' }],
    ['a name of Hangul fillers and a soft hyphen', { name: '\u3164\u115f\u00ad', email: 'a@b.c' }],
    ['a name of tag characters', { name: '\u{e0041}\u{e0064}\u{e0061}', email: 'a@b.c' }],
    ['an email of a word joiner and a space', { name: 'A', email: '\u2060 ' }],
  ])('answers the original message for %s', (_case, body) => {
    expect(bodyError(body)).toBe(REQUIRED_MESSAGE);
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
    // Found by issue 45: each was stored as another address than the one it reads as.
    [{ name: 'A', email: 'al\u00adice@example.com' }, EMAIL_INVISIBLE_MESSAGE],
    [{ name: 'A', email: 'alice@exam\u200bple.com' }, EMAIL_INVISIBLE_MESSAGE],
    [{ name: 'A', email: '\u202ealice@example.com' }, EMAIL_INVISIBLE_MESSAGE],
    [{ name: 'A', email: 'alice\u2066@example.com' }, EMAIL_INVISIBLE_MESSAGE],
    [{ name: 'A', email: 'alice@example.com\u{e0041}' }, EMAIL_INVISIBLE_MESSAGE],
    [{ name: 'A', email: 'al\u034fice@e\ufe0fxample.com' }, EMAIL_INVISIBLE_MESSAGE],
    [{ name: 'A', email: ' a\ufeffb@c.d ' }, EMAIL_INVISIBLE_MESSAGE],
    [{ name: 'A', email: '\u200bno-at-sign' }, EMAIL_INVISIBLE_MESSAGE],
    [{ name: 'A', email: 'a\u0000\u200b@b.c' }, EMAIL_INVISIBLE_MESSAGE],
    [{ name: 'A\ud800', email: 'a@b.c' }, 'name must be valid Unicode text'],
    [{ name: 'A', email: 'a\udc00@b.c' }, 'email must be valid Unicode text'],
  ])('rejects %j with a specific message', (body, error) => {
    expect(bodyError(body)).toBe(error);
  });

  it.each([
    'a@b.c',
    'john.doe+tag@example.com',
    "o'neil!#$%&*/=?^_`{|}~-@sub-domain.example.org",
    'élise@exämple.fr',
    '李@例子.中国',
    'user@localhost',
    `a@${'x'.repeat(63)}.io`,
    ' \u00a0a@b.c\ufeff\u2028',
  ])('accepts the email %j', (email) => {
    expect(bodyError({ name: 'A', email })).toBeUndefined();
  });

  it.each(['Ada\u00adLovelace', '\u200fאדה', '👩\u200d💻', 'क्\u200dष', '\u200b\u2067A\u2069'])(
    'accepts the name %j: invisible characters beside visible ones',
    (name) => {
      expect(bodyError({ name, email: 'a@b.c' })).toBeUndefined();
    },
  );

  it('counts characters, not UTF-16 units, and ignores other fields without removing them', () => {
    const body = { name: ` ${'🙂'.repeat(98)}\n`, email: ' a@b.c ', admin: true };
    expect(bodyError(body)).toBeUndefined();
    expect(body).toEqual({ name: ` ${'🙂'.repeat(98)}\n`, email: ' a@b.c ', admin: true });
  });

  it('counts the lengths as sent, whitespace included', () => {
    expect(bodyError({ name: ` ${'x'.repeat(100)}`, email: 'a@b.c' })).toBe('name must be at most 100 characters');
    expect(bodyError({ name: 'A', email: `${'x'.repeat(114)}@b.com ` })).toBe('email must be at most 120 characters');
  });

  it('never changes a value to make it pass (Fastify’s own Ajv would coerce 42 to "42")', () => {
    const body = { name: 42, email: 'a@b.c' };
    expect(bodyError(body)).toBe('name must be a string');
    expect(body.name).toBe(42);
  });
});

describe('the patterns of NewUserBody', () => {
  const everyCodePoint = Array.from({ length: 0x110000 }, (_, codePoint) => codePoint).filter((c) => c < 0xd800 || c > 0xdfff);

  it('list exactly the characters trim removes', () => {
    const documented = new RegExp(`^[${TRIMMED_CHARACTERS}]$`, 'u');
    const trimmed = everyCodePoint.filter((c) => String.fromCodePoint(c).trim() === '');
    expect(everyCodePoint.filter((c) => documented.test(String.fromCodePoint(c)))).toEqual(trimmed);
  });

  it('list as invisible exactly the format characters and the default ignorable code points', () => {
    const documented = new RegExp(`^[${INVISIBLE_CHARACTERS}]$`, 'u');
    const unicode = /^[\p{Cf}\p{Default_Ignorable_Code_Point}]$/u;
    const listed = everyCodePoint.filter((c) => documented.test(String.fromCodePoint(c)));
    expect(listed).toEqual(everyCodePoint.filter((c) => unicode.test(String.fromCodePoint(c))));
  });

  // Read by other regex engines (a request generator's), so spelt without `\s`, `\p{…}` or lookarounds,
  // and characters beyond the BMP as themselves, not as `\u{…}` or as a surrogate pair's escapes.
  it.each([NAME_PATTERN, EMAIL_PATTERN, BLANK_PATTERN])('uses only syntax every engine reads alike: %s', (pattern) => {
    expect(pattern).not.toMatch(/\\[sSpP]|\(\?[=!<]|\\u\{|\\ud[89a-f]/i);
  });
});

describe('ListQuery, checked', () => {
  /** What a parameter's text means: 1 to 10 decimal digits, the value in its range. */
  const accepted = (value: string, min: number, max: number): boolean => /^\d{1,10}$/.test(value) && +value >= min && +value <= max;

  const candidates = (max: number): string[] => {
    const around = (n: number): number[] => [n - 1, n, n + 1].filter((m) => m >= 0);
    const numbers = [...Array.from({ length: 1100 }, (_, i) => i), ...[10, 100, 1000, max].flatMap(around)];
    const digits = String(max);
    for (let i = 1; i < digits.length; i += 1) numbers.push(...around(Number(digits.slice(0, i).padEnd(digits.length, '9'))));
    for (let i = 1; i <= digits.length; i += 1) numbers.push(...around(Number(digits.slice(0, i).padEnd(digits.length, '0'))));
    const texts = numbers.flatMap((n) => [String(n), `0${n}`, String(n).padStart(10, '0'), String(n).padStart(11, '0')]);
    return [...texts, '', '1e2', '+5', ' 5', '5 ', '1.5', '-1', '0x10', 'abc', '1e400', '99999999999'];
  };

  it.each([
    ['limit', 1, 1000],
    ['after', 0, 2_147_483_647],
  ] as const)('%s: takes exactly the integers from %i to %i in up to 10 decimal digits, as numbers', (name, min, max) => {
    for (const value of candidates(max)) {
      const query = { [name]: value };
      const error = queryError(query);
      expect(error, `${name}=${JSON.stringify(value)}`).toBe(
        accepted(value, min, max) ? undefined : `Invalid query parameter ${name}: expected an integer from ${min} to ${max}`,
      );
      if (error === undefined) expect(query).toEqual({ [name]: Number(value) });
    }
  });

  it('refuses a repeated parameter and names it', () => {
    expect(queryError({ limit: ['1', '2'] })).toBe('Invalid query parameter limit: expected an integer from 1 to 1000');
  });

  it('refuses another parameter first, and names it', () => {
    expect(queryError({ limt: '10' })).toBe('Unknown query parameter limt: expected only limit and after');
    expect(queryError({ limit: 'abc', page: '3' })).toBe('Unknown query parameter page: expected only limit and after');
  });
});

describe('a field a copier adds to the schema', () => {
  // An optional role beside name and email, checked as the routes check NewUserBody.
  const withRole = {
    ...NewUserBody,
    properties: { ...NewUserBody.properties, role: { type: 'string', pattern: '^[a-z]+$', maxLength: 10 } },
  };
  const roleError = checker(withRole, 'body');
  const user = { name: 'Ada', email: 'ada@example.com' };

  it('is named in its own errors, never reported as a missing name or email', () => {
    expect(roleError({ ...user, role: 'member' })).toBeUndefined();
    expect(roleError({ ...user, role: 7 })).toBe('role must be a string');
    expect(roleError({ ...user, role: 'x'.repeat(11) })).toBe('role must be at most 10 characters');
    expect(roleError({ ...user, role: 'Owner' })).toBe('role must match pattern "^[a-z]+$"');
    expect(roleError({ name: '', email: 'ada@example.com', role: 'member' })).toBe(REQUIRED_MESSAGE);
  });
});
