/// <reference lib="dom" />
import type { User } from '@sample-services/users-api/schemas';
import { nextLinkTarget } from './link-header.js';

// The API's own schema types the page's users: a field added there is a field here.
export type { User };

export interface UsersPage {
  users: User[];
  /** Where the next page is, from the answer's Link header; undefined on the last page. */
  next: string | undefined;
}

/** A page that could not be loaded, with a message for the reader. */
export class LoadError extends Error {
  override name = 'LoadError';
}

const isUser = (value: unknown): value is User => {
  if (typeof value !== 'object' || value === null) return false;
  const user = value as Record<string, unknown>;
  return (
    typeof user.id === 'number' && typeof user.name === 'string' && typeof user.email === 'string' && typeof user.created_at === 'string'
  );
};

/** The `error` of a JSON error body, or undefined when the body is something else. */
async function errorOf(response: Response): Promise<string | undefined> {
  try {
    const body: unknown = await response.json();
    const error = (body as { error?: unknown } | null)?.error;
    return typeof error === 'string' ? error : undefined;
  } catch {
    return undefined;
  }
}

/** The next page's URL if it is on this origin; a link elsewhere is not followed (CSP would refuse it anyway). */
function sameOrigin(target: string | undefined, base: string): string | undefined {
  if (target === undefined) return undefined;
  const url = new URL(target, base);
  return url.origin === location.origin ? url.pathname + url.search : undefined;
}

/** One page of the frontend's GET /api/users (`limit` and `after` in the URL), and the link to the next. */
export async function fetchUsersPage(url: string, signal: AbortSignal): Promise<UsersPage> {
  let response: Response;
  try {
    response = await fetch(url, { headers: { accept: 'application/json' }, signal });
  } catch (error) {
    if (signal.aborted) throw error;
    throw new LoadError('The users could not be loaded: this page’s server did not answer. Check the connection, then retry.');
  }
  if (!response.ok) {
    const reason = (await errorOf(response)) ?? `HTTP ${response.status}`;
    const hint = response.status >= 500 ? ' The service behind this page may be down; retry in a moment.' : '';
    throw new LoadError(`The users could not be loaded (${reason}).${hint}`);
  }
  const body: unknown = await response.json().catch(() => undefined);
  if (!Array.isArray(body) || !body.every(isUser))
    throw new LoadError('The users could not be loaded: the answer was not a list of users.');
  return { users: body, next: sameOrigin(nextLinkTarget(response.headers.get('link')), response.url) };
}
