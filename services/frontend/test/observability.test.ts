import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parsePrometheusText, sampleValue } from '@sample-services/testing/prometheus-text';
import { BACKEND_ATTEMPTS } from '../src/backend-client.js';
import { startFakeBackend, startFrontend, type FakeBackend, type Frontend } from './support.js';

describe('the frontend: request ids to the backend, backend errors in /metrics', () => {
  let backend: FakeBackend;
  let frontend: Frontend;
  const sentIds: (string | undefined)[] = [];
  beforeAll(async () => {
    backend = await startFakeBackend();
    frontend = await startFrontend(backend.url);
  });
  afterAll(async () => {
    await frontend?.app.close();
    await backend?.close();
  });

  const backendErrors = async (kind: string): Promise<number> => {
    const families = parsePrometheusText(await (await fetch(`${frontend.url}/metrics`)).text());
    return sampleValue(families, 'upstream_errors_total', { kind }) ?? Number.NaN;
  };

  it("sends the backend its request's id, the client's own when well formed", async () => {
    backend.answer((req, res) => {
      sentIds.push(req.headers['x-request-id'] as string | undefined);
      res.writeHead(200, { 'content-type': 'application/json' }).end('[]');
    });
    const kept = await fetch(`${frontend.url}/api/users`, { headers: { 'x-request-id': 'page-view-42' } });
    expect(kept.headers.get('x-request-id')).toBe('page-view-42');
    const made = await fetch(`${frontend.url}/api/users`, { headers: { 'x-request-id': 'bad\tid' } });
    const id = made.headers.get('x-request-id');
    expect(id).not.toBe('bad\tid');
    expect(sentIds).toEqual(['page-view-42', id]);
  });

  it('counts a backend 5xx as bad_status and each reset attempt as reset, and logs the failure with the request id', async () => {
    const badStatus = await backendErrors('bad_status');
    const reset = await backendErrors('reset');
    backend.answer((_req, res) => res.writeHead(503, { 'content-type': 'application/json' }).end('{"error":"down"}'));
    expect((await fetch(`${frontend.url}/api/users`, { headers: { 'x-request-id': 'failing-1' } })).status).toBe(500);
    backend.answer((req) => req.socket.destroy());
    expect((await fetch(`${frontend.url}/api/users`)).status).toBe(500);
    expect(await backendErrors('bad_status')).toBe(badStatus + 1);
    // A reset GET is sent again (backend-retries.test.ts): every attempt counts.
    expect(await backendErrors('reset')).toBe(reset + BACKEND_ATTEMPTS);
    expect(frontend.logged()).toContainEqual(
      expect.objectContaining({ msg: 'could not fetch users from the backend', reqId: 'failing-1' }),
    );
  });
});
