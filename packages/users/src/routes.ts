import { errorSchema, HttpError } from '@svc/kit';
import type { FastifyInstance } from 'fastify';
import { userSchema, usersSchema } from './schemas.js';
import { DatabaseUnavailableError, DuplicateEmailError, type UserStore } from './user.js';
import { parseNewUser } from './validate.js';

/** The health probe gives up after this, well within the 2 s it must answer in and the 3 s image health check. */
export const PING_TIMEOUT_MS = 1_000;

export interface UserRoutesOptions {
  /** Also offer POST /api/users (variant B; the backend of C only lists). */
  create: boolean;
}

/** `connected` when `SELECT 1` answers in time (spec 2.3). */
export async function databaseStatus(store: UserStore): Promise<'connected' | 'disconnected'> {
  return (await store.ping(PING_TIMEOUT_MS)) ? 'connected' : 'disconnected';
}

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

/** GET /api/users and, when asked, POST /api/users (spec 4.2, 4.3) on the given store. */
export function addUserRoutes(app: FastifyInstance, store: UserStore, options: UserRoutesOptions): void {
  app.get('/api/users', { schema: { response: { 200: usersSchema, 503: errorSchema } } }, async () => fromStore(() => store.list()));
  if (!options.create) return;

  // An empty body sent as JSON is an absent body (rule 1 of spec 4.2), not a parse error.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else void parseJson(request, body as string, done); // parseAs: 'string' hands over a string
  });

  app.post(
    '/api/users',
    { schema: { response: { 201: userSchema, 400: errorSchema, 409: errorSchema, 503: errorSchema } } },
    async (request, reply) => {
      const parsed = parseNewUser(request.body);
      if (!parsed.ok) throw new HttpError(400, parsed.error);
      const user = await fromStore(() => store.create(parsed.user));
      return reply.code(201).send(user);
    },
  );
}
