/** Schemas of the user routes: one User schema for POST and list keeps their bytes identical. */
import { errorAnswer, IsoTimestamp } from '@svc/kit';
import { Type, type Static } from 'typebox';
import { MAX_ID, MAX_PAGE_SIZE } from './user-store.js';
import { EMAIL_MAX_LENGTH, EMAIL_PATTERN, NAME_MAX_LENGTH, NAME_PATTERN } from './validate.js';

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
 * Keyset pagination of the list; without `limit` the whole list comes, streamed. Documented
 * here, checked by parseListQuery (strictly: a coercing validator would take 1e2 or 1e400).
 * No other parameter is taken.
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

/** The list's 400: what parseListQuery refuses. */
export const BadListQuery = errorAnswer(
  '`limit` or `after` is not an integer in its range, or another query parameter was given',
  'Invalid query parameter limit: expected an integer from 1 to 1000',
);

/**
 * What a create request should send, lengths counted as sent. Documented, not enforced by the
 * schema: parseNewUser checks the same rules and answers with the original's own texts (spec
 * 4.2), which a schema validator cannot.
 */
export const NewUserBody = Type.Object(
  {
    name: Type.String({
      maxLength: NAME_MAX_LENGTH,
      pattern: NAME_PATTERN,
      description: 'Something besides whitespace, no NUL; stored trimmed of surrounding whitespace',
    }),
    email: Type.String({
      maxLength: EMAIL_MAX_LENGTH,
      pattern: EMAIL_PATTERN,
      description:
        "local@domain: the local part dot-separated runs of letters, digits and !#$%&'*+/=?^_`{|}~-, the domain " +
        'dot-separated labels of letters and digits with inner hyphens (at most 63 each); stored trimmed; unique',
    }),
  },
  { examples: [{ name: 'Ada Lovelace', email: 'ada@example.com' }] },
);

export const DatabaseStatus = Type.Union([Type.Literal('connected'), Type.Literal('disconnected')], {
  description: '`connected` when `SELECT 1` answers within 1 s',
});
