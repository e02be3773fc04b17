import { errorAnswer, HttpError } from '@svc/kit';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { DatabaseStatus, NewUserBody, User, UserList } from './schemas.js';
import { DatabaseUnavailableError, DuplicateEmailError, type UserStore } from './user.js';
import { parseNewUser } from './validate.js';

/** The health probe gives up after this, well within the 2 s it must answer in and the 3 s image health check. */
const PING_TIMEOUT_MS = 1_000;

/** `connected` when `SELECT 1` answers in time (spec 2.3). */
export async function databaseStatus(store: UserStore): Promise<'connected' | 'disconnected'> {
  return (await store.ping(PING_TIMEOUT_MS)) ? 'connected' : 'disconnected';
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

/** GET /api/users on the store (spec 4.2, 4.3). */
export function listUsersPlugin(store: UserStore): FastifyPluginCallbackTypebox {
  return (app, _options, done) => {
    app.get(
      '/api/users',
      { schema: { summary: 'List every user', tags: ['users'], response: { 200: UserList, 503: unavailable } } },
      async () => fromStore(() => store.list()),
    );
    done();
  };
}

/**
 * POST /api/users on the store (spec 4.2). Encapsulated: its JSON parser, which takes an empty
 * body as an absent one, applies to this route alone.
 */
export function createUserPlugin(store: UserStore): FastifyPluginCallbackTypebox {
  return (app, _options, done) => {
    // An empty body sent as JSON is an absent body (rule 1 of spec 4.2), not a parse error.
    const parseJson = app.getDefaultJsonParser('error', 'error');
    app.removeContentTypeParser('application/json');
    app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, parsed) => {
      if (body === '') parsed(null, undefined);
      else void parseJson(request, body as string, parsed); // parseAs: 'string' hands over a string
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
        // The body schema documents; parseNewUser checks, with the original's texts (see NewUserBody).
        validatorCompiler: () => () => true,
      },
      async (request, reply) => {
        const parsed = parseNewUser(request.body);
        if (!parsed.ok) throw new HttpError(400, parsed.error);
        const user = await fromStore(() => store.create(parsed.user));
        return reply.code(201).send(user);
      },
    );
    done();
  };
}
