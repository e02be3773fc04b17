/**
 * X-Request-Id ties a request's log lines together across hops (proxy -> web, frontend -> backend).
 * A client's id is kept when well formed, so one id follows the request through every service;
 * anything else is replaced by a new UUID, so a client cannot write arbitrary text into the logs.
 * Hand-written check: Fastify's requestIdHeader option takes the header's value as it comes.
 */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

export const requestIdHeader = 'x-request-id';

/** At most 128 characters of letters, digits and `.`, `_`, `:`, `-` (a UUID, a ULID, nginx's hex $request_id). */
const wellFormed = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify's genReqId: the X-Request-Id when well formed (two headers are joined by a comma, so replaced), else a new UUID. */
export function assignRequestId(request: Pick<IncomingMessage, 'headers'>): string {
  const sent = request.headers[requestIdHeader];
  return typeof sent === 'string' && wellFormed.test(sent) ? sent : randomUUID();
}
