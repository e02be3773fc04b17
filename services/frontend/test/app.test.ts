import { describe, expect, it } from 'vitest';
import { copierHookContract } from '@sample-services/testing/contract/copier-hook';
import { openApiContract } from '@sample-services/testing/contract/openapi-document';
import { createFrontendApp } from '../src/app.js';
import type { BackendClient } from '../src/backend-client.js';

/** A backend client the app never gets to call. */
function unusedBackend(): BackendClient & { closed: boolean } {
  const client = {
    closed: false,
    fetchUsers: () => Promise.reject(new Error('not called')),
    start: () => Promise.resolve(),
    close: async () => void (client.closed = true),
  };
  return client;
}

interface Operation {
  parameters?: { in: string; name: string; schema: { minimum?: number; maximum?: number } }[];
  responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema: { type?: string } }> }>;
}

describe('variant C frontend app (in-process)', () => {
  it('closes its backend client when it closes', async () => {
    const backend = unusedBackend();
    const app = createFrontendApp({ logger: false, backend });
    await app.ready();
    await app.close();
    expect(backend.closed).toBe(true);
  });

  it('documents GET /api/users with the query and answers of the backend list: limit, after, a list with its Link', async () => {
    const app = createFrontendApp({ logger: false, backend: unusedBackend() });
    await app.ready();
    const operation = (app.swagger() as unknown as { paths: Record<string, Record<string, Operation>> }).paths['/api/users']?.get;
    const query = Object.fromEntries((operation?.parameters ?? []).filter((p) => p.in === 'query').map((p) => [p.name, p.schema]));
    expect(query).toMatchObject({ limit: { minimum: 1, maximum: 1000 }, after: { minimum: 0, maximum: 2147483647 } });
    expect(operation?.responses['200']?.content?.['application/json']?.schema.type).toBe('array');
    expect(operation?.responses['200']?.headers).toHaveProperty('link');
    expect(Object.keys(operation?.responses ?? {})).toEqual(expect.arrayContaining(['200', '400', '500']));
    await app.close();
  });

  it('answers a bad query with the backend 400 without calling it', async () => {
    const app = createFrontendApp({ logger: false, backend: unusedBackend() });
    const res = await app.inject({ method: 'GET', url: '/api/users?limit=1001' });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toEqual({ error: 'Invalid query parameter limit: expected an integer from 1 to 1000' });
    await app.close();
  });
});

copierHookContract(() => createFrontendApp({ logger: false, backend: unusedBackend() }));
openApiContract('frontend', () => createFrontendApp({ logger: false, backend: unusedBackend() }));
