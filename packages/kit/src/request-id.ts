/**
 * X-Request-Id: the id that ties a request's log lines together across hops (proxy -> web,
 * frontend -> backend). A client's (or a proxy's) id is kept when it is well formed, so one id
 * follows the request through every service; anything else is replaced by a new UUID, so a
 * client cannot write arbitrary text (line breaks, control characters, megabytes) into the logs.
 * Hand-written check: Fastify's requestIdHeader option takes the header's value as it comes.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const requestIdHeader = 'x-request-id';

/** At most 128 characters of letters, digits and `.`, `_`, `:`, `-` (a UUID, a ULID, nginx's hex $request_id). */
const wellFormed = /^[A-Za-z0-9._:-]{1,128}$/;

/** Where the id of a request is kept, for an answer written on Node's response (answerError). */
const idKey = Symbol('requestId');
type Identified = IncomingMessage & { [idKey]?: string };

/**
 * Fastify's genReqId: the request's X-Request-Id when well formed (one header; two are joined by a
 * comma and a space, so they are replaced), a new UUID otherwise. Kept on the request for the response.
 */
export function assignRequestId(request: IncomingMessage): string {
  const sent = request.headers[requestIdHeader];
  const id = typeof sent === 'string' && wellFormed.test(sent) ? sent : randomUUID();
  (request as Identified)[idKey] = id;
  return id;
}

/** The id assignRequestId gave the request; undefined for one Fastify never routed. */
export const requestIdOf = (request: IncomingMessage): string | undefined => (request as Identified)[idKey];
