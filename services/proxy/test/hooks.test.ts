import { describe, expect, it } from 'vitest';
import { proxyOnEchoUpstream } from './support.js';

// Every forwarded request goes through Fastify's routing, so a hook a copier adds (auth, a rate
// limit) holds for requests over a socket exactly as for app.inject()'s.
describe('an onRequest hook added to the proxy app', () => {
  const proxy = proxyOnEchoUpstream(false, (app) => {
    app.addHook('onRequest', async (request, reply) => {
      if (request.headers.authorization !== 'Bearer x') return reply.code(401).send({ error: 'Unauthorized' });
    });
  });

  it.each([
    ['without a token', {}, 401],
    ['with the wrong token', { authorization: 'Bearer y' }, 401],
    ['with the token', { authorization: 'Bearer x' }, 200],
  ])('answers a request %s over a socket as through inject()', async (_case, headers: Record<string, string>, status) => {
    const before = proxy.upstream().requests;
    const overSocket = await fetch(`${proxy.baseUrl()}/api/users?q=1`, { method: 'POST', headers, body: '{}' });
    const injected = await proxy.app().inject({ method: 'POST', url: '/api/users?q=1', headers, payload: '{}' });
    expect([overSocket.status, injected.statusCode]).toEqual([status, status]);
    const socketBody = (await overSocket.json()) as Record<string, unknown>;
    const injectedBody = injected.json<Record<string, unknown>>();
    if (status === 401) expect([socketBody, injectedBody]).toEqual([{ error: 'Unauthorized' }, { error: 'Unauthorized' }]);
    else expect([socketBody.url, injectedBody.url]).toEqual(['/api/users?q=1', '/api/users?q=1']);
    expect(proxy.upstream().requests - before).toBe(status === 401 ? 0 : 2);
  });
});
