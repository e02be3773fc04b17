import { documentedFetch } from './documented.js';
import { expect, it } from 'vitest';
import { paginationContract } from './pagination.js';
import { fetchUserList, type ListedUser } from './users.js';

export interface BackendExpectations {
  /** The exact list, when the test seeded the database; otherwise only the shape is checked. */
  users?: ListedUser[];
  /** Adds users beside the backend (it has no create) until the list holds `count`; pagination is checked when given. */
  ensureUsers?: (count: number) => Promise<void>;
}

/** Backend of variant C (spec 4.3) against any base URL. */
export function backendContract(baseUrl: () => string, expected: BackendExpectations = {}): void {
  it('GET /health reports the service and the database connectivity', async () => {
    const res = await documentedFetch(`${baseUrl()}/health`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('{"status":"healthy","service":"backend","database":"connected"}');
  });

  it('GET /api/users lists the users ordered by id with id, name, email and created_at', async () => {
    const { users } = await fetchUserList(baseUrl());
    if (expected.users !== undefined) expect(users).toEqual(expected.users);
  });

  it('offers no create operation: POST /api/users answers 405 JSON with Allow', async () => {
    const res = await documentedFetch(`${baseUrl()}/api/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'A', email: 'a@b.c' }),
    });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('GET, HEAD, OPTIONS');
    expect(await res.json()).toEqual({ error: 'Method POST is not allowed on /api/users' });
  });

  if (expected.ensureUsers !== undefined) paginationContract(baseUrl, expected.ensureUsers);
}
