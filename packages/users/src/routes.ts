import { Readable } from 'node:stream';
import { errorAnswer } from '@sample-services/kit/schemas';
import { HttpError } from '@sample-services/kit/errors';
import { sendUnchecked } from '@sample-services/kit/server';
import type { ReadyCheck } from '@sample-services/kit/ready';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { BadListQuery, DatabaseStatus, ListQuery, NewUserBody, User, UserList } from '@sample-services/users-api/schemas';
import { nextPageLink } from '@sample-services/users-api/next-page-link';
import { userRequestChecks } from '@sample-services/users-api/request-checks';
import { STREAM_BATCH, streamList } from './list-stream.js';
import { DatabaseUnavailableError, DuplicateEmailError, type UserPage, type UserStore } from './user-store.js';

/** The health probe gives up after this, well within the 2 s it must answer in and the 3 s image health check. */
const PING_TIMEOUT_MS = 1_000;

/** `connected` when `SELECT 1` answers in time (spec 2.3). */
export async function databaseStatus(store: UserStore): Promise<'connected' | 'disconnected'> {
  return (await store.ping(PING_TIMEOUT_MS)) ? 'connected' : 'disconnected';
}

/** The readiness check (the kit's readyPlugin) of a service that needs its database: `SELECT 1` answers in time. */
export function databaseReady(store: UserStore): ReadyCheck {
  return async () => (await databaseStatus(store)) === 'connected' || 'the database is unreachable';
}

export { DatabaseStatus };

/** Store failures as the client sees them; the cause rides along for the kit's log line. */
function httpErrorFor(error: unknown): unknown {
  if (error instanceof DuplicateEmailError) return new HttpError(409, 'A user with this email already exists');
  if (error instanceof DatabaseUnavailableError) {
    return Object.assign(new HttpError(503, 'Database unavailable; try again later'), { cause: error.cause });
  }
  return error;
}

async function fromStore<T>(action: () => Promise<T>): Promise<T> {
  try {
    return await action();
  } catch (error) {
    throw httpErrorFor(error);
  }
}

const unavailable = errorAnswer('The database is unreachable or too slow; try again', 'Database unavailable; try again later');

/** GET /api/users on the store (spec 4.2, 4.3), with keyset pagination for clients that want pages. */
export function listUsersPlugin(store: UserStore): FastifyPluginCallbackTypebox {
  // A page answered whole, encoded once for every request that gets the same page object: the
  // ones sharing a PostgreSQL query (coalesce.ts), or SQLite's cached head of the list. Kept only
  // as long as the page itself (so at most as many bytes again as SQLite's bounded page cache).
  const bodies = new WeakMap<UserPage, Buffer>();
  const wholeBody = (page: UserPage): Buffer => {
    let body = bodies.get(page);
    if (body === undefined) bodies.set(page, (body = Buffer.from(`[${page.json}]`)));
    return body;
  };
  return (app, _options, done) => {
    const schema = {
      summary: 'List every user, or one page of them',
      description:
        'Without `limit`, every user, streamed from the database in batches (a database failure after the first ' +
        'bytes cuts the response, so it never parses as a shorter list). With `limit`, one page and a `Link` to the next.',
      tags: ['users'],
      querystring: ListQuery,
      response: {
        200: UserList,
        400: BadListQuery,
        503: unavailable,
      },
    };
    app.get('/api/users', { schema, ...userRequestChecks }, async (request, reply) => {
      const { limit, after = 0 } = request.query;
      const page = await fromStore(() => store.page(after, limit ?? STREAM_BATCH));
      void reply.type('application/json; charset=utf-8');
      if (limit !== undefined && page.more && page.lastId !== undefined) void reply.header('link', nextPageLink(limit, page.lastId));
      // The body is JSON text written by the database (UserPage), a list of User by construction.
      if (limit !== undefined || !page.more) sendUnchecked(reply, wholeBody(page));
      // HEAD gets the streamed answer's headers without reading the rest of the table.
      else if (request.method === 'HEAD') sendUnchecked(reply, Readable.from([]));
      else {
        const cut = (error: unknown, lastId: number | undefined): void =>
          request.log.error({ err: error, lastId }, 'user list cut short: the database failed while it was being sent');
        sendUnchecked(reply, streamList(store, page, cut));
      }
      return reply;
    });
    done();
  };
}

/**
 * A create request's JSON body: undefined when empty. Keys that would reach an object's prototype
 * when the body is copied or merged are refused by name; Fastify's own parser refuses them too,
 * but as "not valid JSON", which is false.
 */
function parseJsonBody(body: string): unknown {
  if (body === '') return undefined;
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return new HttpError(400, 'Request body is not valid JSON');
  }
  const forbidden = prototypeKey(value);
  return forbidden === undefined ? value : new HttpError(400, `Request body must not contain the key ${forbidden}`);
}

/**
 * `__proto__` or `constructor.prototype` when an object in the value has such a key (JSON.parse
 * makes them own keys). A loop, not recursion: a 1 MiB body can nest deeper than the stack.
 */
function prototypeKey(value: unknown): string | undefined {
  const pending: unknown[] = [value];
  for (let item = pending.pop(); item !== undefined; item = pending.pop()) {
    if (typeof item !== 'object' || item === null) continue;
    if (Object.hasOwn(item, '__proto__')) return '__proto__';
    const constructor: unknown = Object.hasOwn(item, 'constructor') ? (item as { constructor: unknown }).constructor : undefined;
    if (typeof constructor === 'object' && constructor !== null && Object.hasOwn(constructor, 'prototype')) return 'constructor.prototype';
    for (const child of Object.values(item)) pending.push(child);
  }
  return undefined;
}

/**
 * POST /api/users on the store (spec 4.2). Encapsulated: its JSON parser, which takes an empty
 * body as an absent one, applies to this route alone.
 */
export function createUserPlugin(store: UserStore): FastifyPluginCallbackTypebox {
  return (app, _options, done) => {
    // An empty body sent as JSON is an absent body (rule 1 of spec 4.2), not a parse error.
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (_request, body, parsed) => {
      const result = parseJsonBody(body as string); // parseAs: 'string' hands over a string
      if (result instanceof HttpError) parsed(result, undefined);
      else parsed(null, result);
    });

    app.post(
      '/api/users',
      {
        schema: {
          summary: 'Create a user',
          tags: ['users'],
          body: NewUserBody,
          response: {
            201: User,
            400: errorAnswer('Missing, empty, over-long or malformed name or email, or malformed JSON', 'Name and email are required'),
            409: errorAnswer('The email is taken', 'A user with this email already exists'),
            503: unavailable,
          },
        },
        ...userRequestChecks,
      },
      async (request, reply) => {
        // Stored trimmed, so ` a@b.c ` and `a@b.c` are one email; the lengths counted as sent.
        const { name, email } = request.body;
        const user = await fromStore(() => store.create({ name: name.trim(), email: email.trim() }));
        return reply.code(201).send(user);
      },
    );
    done();
  };
}
