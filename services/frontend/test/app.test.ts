import { describe, expect, it } from 'vitest';
import { createFrontendApp } from '../src/app.js';
import type { BackendClient } from '../src/backend-client.js';

function backend(fetchUsers: () => Promise<string>): BackendClient & { closed: boolean } {
  const client = { closed: false, fetchUsers, close: async () => void (client.closed = true) };
  return client;
}

describe('variant C frontend app (in-process, fake backend client)', () => {
  it("sends the backend's JSON text as it came", async () => {
    const text = '[{"id":1,"name":"A","email":"a@b.c","created_at":"2026-01-02T03:04:05.678Z"}]';
    const client = backend(async () => text);
    const app = createFrontendApp({ logger: false, backend: client });
    const res = await app.inject({ method: 'GET', url: '/api/users' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.body).toBe(text);
    await app.close();
    expect(client.closed).toBe(true);
  });

  it('answers 500 with the original message when the backend call fails', async () => {
    const app = createFrontendApp({ logger: false, backend: backend(() => Promise.reject(new Error('connect ECONNREFUSED'))) });
    const res = await app.inject({ method: 'GET', url: '/api/users' });
    expect(res.statusCode).toBe(500);
    expect(res.json()).toEqual({ error: 'Failed to fetch users' });
    await app.close();
  });
});
