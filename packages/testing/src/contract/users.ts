import { documentedFetch } from './documented.js';
import { expect } from 'vitest';
import { isoUtc } from './common.js';

/** What the user routes of B and C's backend return (spec 2.1): exactly these fields. */
export interface ListedUser {
  id: number;
  name: string;
  email: string;
  created_at: string;
}

/** An email no earlier run used, so suites work on databases that already hold users. */
export function uniqueEmail(label: string): string {
  return `${label}-${Date.now().toString(36)}-${Math.random().toString(36).slice(2, 8)}@example.com`;
}

/** Checks the shape of GET /api/users and returns the parsed list and its exact text. */
export async function fetchUserList(baseUrl: string): Promise<{ users: ListedUser[]; text: string }> {
  const res = await documentedFetch(`${baseUrl}/api/users`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const text = await res.text();
  const users = JSON.parse(text) as ListedUser[];
  expect(Array.isArray(users)).toBe(true);
  for (const user of users) {
    expect(Object.keys(user)).toEqual(['id', 'name', 'email', 'created_at']);
    expect(Number.isInteger(user.id)).toBe(true);
    expect(user.created_at).toMatch(isoUtc);
  }
  const ids = users.map((u) => u.id);
  expect(ids).toEqual([...ids].sort((a, b) => a - b));
  return { users, text };
}
