import { errorAnswer } from '@sample-services/kit/schemas';
import { sendUnchecked } from '@sample-services/kit/server';
import type { FastifyPluginCallbackTypebox } from '@fastify/type-provider-typebox';
import { BadListQuery, ListQuery, UserList } from '@sample-services/users-api/schemas';
import { userRequestChecks } from '@sample-services/users-api/request-checks';
import type { BackendClient, UsersAnswer } from './backend-client.js';

const fetchFailed = errorAnswer(
  'The backend failed before its body began: refused, no answer in time, non-2xx, or not JSON',
  'Failed to fetch users',
);

/**
 * GET /api/users: the backend's list, streamed through as it comes, byte for byte, with its
 * content type and its Link to the next page, nothing else of its headers.
 */
export function usersRoute(backend: BackendClient): FastifyPluginCallbackTypebox {
  return (app, _options, done) => {
    const schema = {
      summary: "The backend's user list, or one page of it",
      description:
        "The backend's answer streamed through: without `limit` every user, with `limit` one page and the backend's `Link` " +
        'to the next. When the backend fails after the first bytes, the response is cut, so it never parses as a shorter list.',
      tags: ['users'],
      querystring: ListQuery,
      response: { 200: UserList, 400: BadListQuery, 500: fetchFailed },
    };
    // Checked as the backend checks it, so a bad value gets the backend's own 400 from here, without a backend call.
    app.get('/api/users', { schema, ...userRequestChecks }, async (request, reply) => {
      const { limit, after } = request.query;
      // The response closes when it is sent or when the client goes away; either way the backend call is over.
      const clientGone = new AbortController();
      reply.raw.once('close', () => clientGone.abort());
      let users: UsersAnswer;
      try {
        users = await backend.fetchUsers({
          method: request.method === 'HEAD' ? 'HEAD' : 'GET',
          limit,
          after,
          signal: clientGone.signal,
          requestId: request.id,
        });
      } catch (error) {
        if (clientGone.signal.aborted) request.log.debug('the client went away before the backend answered');
        else request.log.error({ err: error }, 'could not fetch users from the backend');
        return reply.code(500).send({ error: 'Failed to fetch users' });
      }
      // Heard from the start: fetchUsers resolved in this same run of microtasks, before any socket event.
      users.body.once('error', (error) => {
        // Fastify destroys the response, so the client sees a cut chunked body, never a shorter list.
        if (!clientGone.signal.aborted) request.log.error({ err: error }, 'the backend failed mid-body: the response is cut');
      });
      void reply.header('content-type', users.contentType);
      if (users.link !== undefined) void reply.header('link', users.link);
      // A list of users only as far as the backend says so (a 2xx JSON answer of its list route).
      sendUnchecked(reply, users.body);
      return reply;
    });
    done();
  };
}
