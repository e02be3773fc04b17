/**
 * Schemas of the user routes: they type the handlers, document the routes, and (request-checks.ts)
 * are what requests are checked against. One User schema for POST and list keeps their bytes identical.
 */
import { errorAnswer } from '@sample-services/kit/schemas';
import { Type, type Static } from 'typebox';
import { BLANK_PATTERN, EMAIL_PATTERN, NAME_PATTERN, UNICODE_TEXT } from './text-patterns.js';

/** Column limits (spec 2.1 and 8), counted in Unicode characters as PostgreSQL counts them. */
export const NAME_MAX_LENGTH = 100;
export const EMAIL_MAX_LENGTH = 120;

/** PostgreSQL's integer: the largest id either database hands out here. */
export const MAX_ID = 2_147_483_647;

/** Most users one page holds. */
export const MAX_PAGE_SIZE = 1000;

/** An ISO 8601 timestamp in UTC with milliseconds and `Z`, as every service writes them. */
const IsoTimestamp = Type.String({
  description: 'ISO 8601 in UTC, with milliseconds',
  pattern: '^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{3}Z$',
  examples: ['2026-11-22T10:15:30.123Z'],
});

const example = { id: 1, name: 'Ada Lovelace', email: 'ada@example.com', created_at: '2026-11-22T10:15:30.123Z' };

export const User = Type.Object(
  {
    id: Type.Integer({ description: 'Assigned by the service' }),
    name: Type.String({ maxLength: NAME_MAX_LENGTH }),
    email: Type.String({ maxLength: EMAIL_MAX_LENGTH }),
    created_at: IsoTimestamp,
  },
  { examples: [example] },
);
export type User = Static<typeof User>;

export const UserList = Type.Array(User, {
  description: 'Every user (or the page asked for), ordered by id',
  examples: [[example]],
  headers: {
    link: {
      description: 'With `limit`, when more users follow: `</api/users?limit=N&after=ID>; rel="next"` (RFC 8288)',
      type: 'string',
    },
  },
});

/**
 * Keyset pagination of the list; without `limit` the whole list comes, streamed. No other
 * parameter is taken. Each is sent in decimal digits (request-checks.ts), which is all a
 * query string can say of an integer.
 */
export const ListQuery = Type.Object(
  {
    limit: Type.Optional(
      Type.Integer({ minimum: 1, maximum: MAX_PAGE_SIZE, description: `Page size, 1 to ${MAX_PAGE_SIZE}; absent: every user` }),
    ),
    after: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_ID,
        description: 'Only users with a greater id: the last id of the page before (default 0)',
      }),
    ),
  },
  { additionalProperties: false },
);

/** The list's 400: a query ListQuery refuses. */
export const BadListQuery = errorAnswer(
  '`limit` or `after` is not an integer in its range, or another query parameter was given',
  'Invalid query parameter limit: expected an integer from 1 to 1000',
);

/** Neither null nor blank (nothing visible): a field that is there (spec 4.2 rule 1); its type is NewUserBody's to check. */
const Present = Type.Unsafe<unknown>({
  not: { anyOf: [{ type: 'null' }, { type: 'string', pattern: BLANK_PATTERN }] },
});

/**
 * What a create request sends, lengths counted as sent. The `allOf` says rule 1 of spec 4.2
 * (name and email there, not null, not blank), which comes before any other rule: a blank email
 * beside a numeric name is "required", not a wrong type. Other properties are ignored.
 */
export const NewUserBody = Type.Object(
  {
    name: Type.String({
      maxLength: NAME_MAX_LENGTH,
      pattern: NAME_PATTERN,
      format: UNICODE_TEXT,
      description:
        'Something visible besides whitespace and invisible characters, no NUL, no lone surrogate; stored trimmed of surrounding whitespace',
    }),
    email: Type.String({
      maxLength: EMAIL_MAX_LENGTH,
      pattern: EMAIL_PATTERN,
      format: UNICODE_TEXT,
      description:
        "local@domain: the local part dot-separated runs of letters, digits and !#$%&'*+/=?^_`{|}~-, the domain " +
        'dot-separated labels of letters and digits with inner hyphens (at most 63 each); no invisible characters (zero-width, ' +
        'soft hyphen, bidi and other format characters); stored trimmed; unique',
    }),
  },
  {
    allOf: [Type.Object({ name: Present, email: Present }, { description: 'Name and email are required' })],
    examples: [{ name: 'Ada Lovelace', email: 'ada@example.com' }],
  },
);
export type NewUserBody = Static<typeof NewUserBody>;

export const DatabaseStatus = Type.Union([Type.Literal('connected'), Type.Literal('disconnected')], {
  description: '`connected` when `SELECT 1` answers within 1 s',
});
