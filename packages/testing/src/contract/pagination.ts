import { expect, it } from 'vitest';
import { documentedFetch } from './documented.js';
import { fetchUserList, type ListedUser } from './users.js';

/** The path and query of a `Link: <...>; rel="next"` header (RFC 8288), or undefined without one. */
export function nextLink(res: Response): string | undefined {
  const link = res.headers.get('link');
  if (link === null) return undefined;
  const match = /^<([^>]+)>;\s*rel="next"$/.exec(link);
  expect(match, `Link header ${link}`).not.toBeNull();
  return match![1];
}

/** Walks the list page by page, following each Link from `start`; returns the pages' users in order. */
export async function walkPages(baseUrl: string, start: string): Promise<{ users: ListedUser[]; pages: number }> {
  const users: ListedUser[] = [];
  let pages = 0;
  for (let path: string | undefined = start; path !== undefined; pages += 1) {
    const res = await documentedFetch(`${baseUrl}${path}`);
    expect(res.status).toBe(200);
    users.push(...((await res.json()) as ListedUser[]));
    path = nextLink(res);
  }
  return { users, pages };
}

/**
 * Keyset pagination of GET /api/users (`limit`, `after`), for every service that lists users.
 * `ensureUsers` makes sure the list holds at least that many users (a backend without create
 * is seeded by its test), so that pages follow one another.
 */
export function paginationContract(baseUrl: () => string, ensureUsers: (count: number) => Promise<void>): void {
  it('pages through the list by id with limit and after, a Link to each next page, none after the last', async () => {
    await ensureUsers(5);
    const { users: all, text } = await fetchUserList(baseUrl());
    const walked = await walkPages(baseUrl(), '/api/users?limit=2');
    expect(walked.users).toEqual(all);
    expect(walked.pages).toBe(Math.ceil(all.length / 2));
    // Each page is the same JSON text as its stretch of the whole list.
    const second = await documentedFetch(`${baseUrl()}/api/users?limit=2&after=${all[1]!.id}`);
    expect(text).toContain((await second.text()).slice(1, -1));
    const last = await documentedFetch(`${baseUrl()}/api/users?after=${all.at(-2)!.id}&limit=1000`);
    expect(await last.json()).toEqual([all.at(-1)]);
    expect(last.headers.get('link')).toBeNull();
  });

  it('lists every user after `after` when there is no limit, without a Link', async () => {
    await ensureUsers(3);
    const { users: all } = await fetchUserList(baseUrl());
    const res = await documentedFetch(`${baseUrl()}/api/users?after=${all[0]!.id}`);
    expect(await res.json()).toEqual(all.slice(1));
    expect(res.headers.get('link')).toBeNull();
  });

  const bad: [string, string][] = [
    ['limit=0', 'limit'],
    ['limit=1001', 'limit'],
    ['limit=abc', 'limit'],
    ['limit=1.5', 'limit'],
    ['limit=-1', 'limit'],
    ['limit=', 'limit'],
    ['limit=1&limit=2', 'limit'],
    ['after=-1', 'after'],
    ['after=x', 'after'],
    ['after=2147483648', 'after'],
    ['after=1e400', 'after'],
    ['limit=1e2', 'limit'],
    ['limit=%2B5', 'limit'],
    ['limit=%205', 'limit'],
    // Another parameter is refused, not ignored: a misspelt limit would get the whole list.
    ['limt=10', 'limt'],
    ['limit=2&page=3', 'page'],
  ];
  it.each(bad)('answers 400 JSON naming the parameter for ?%s', async (query, parameter) => {
    const res = await documentedFetch(`${baseUrl()}/api/users?${query}`);
    expect(res.status).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: string };
    expect(Object.keys(body)).toEqual(['error']);
    expect(body.error).toContain(parameter);
  });
}
