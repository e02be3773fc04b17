import { HttpError } from '@svc/kit';
import { MAX_ID, MAX_PAGE_SIZE } from './user-store.js';

/** What a client asked of the list: the users after `after`, all of them or a page of `limit`. */
export interface ListRequest {
  after: number;
  limit: number | undefined;
}

/** The list's only query parameters (ListQuery). */
const listParameters = new Set(['limit', 'after']);

/**
 * Reads `limit` and `after` from a parsed query string, strictly: decimal digits only (no sign,
 * exponent, fraction or space, which a coercing schema validator lets through as 1e2 or
 * Infinity), in range, given once. A bad value is a 400 naming the parameter, and so is any other
 * parameter: a misspelt `limt=10` would otherwise get the whole list instead of a page.
 */
export function parseListQuery(query: Record<string, unknown>): ListRequest {
  for (const name of Object.keys(query)) {
    if (!listParameters.has(name)) throw new HttpError(400, `Unknown query parameter ${name}: expected only limit and after`);
  }
  return {
    after: readInteger(query, 'after', 0, MAX_ID) ?? 0,
    limit: readInteger(query, 'limit', 1, MAX_PAGE_SIZE),
  };
}

function readInteger(query: Record<string, unknown>, name: string, min: number, max: number): number | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  const number = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : NaN;
  if (!(number >= min && number <= max)) {
    throw new HttpError(400, `Invalid query parameter ${name}: expected an integer from ${min} to ${max}`);
  }
  return number;
}
