import type { User } from '@sample-services/users-api/schemas';

export type { User };

/** What a client supplies to create a user, already checked against NewUserBody and trimmed. */
export interface NewUser {
  name: string;
  email: string;
}

/** The largest id either database hands out, and the most users one page holds: limits of the HTTP contract. */
export { MAX_ID, MAX_PAGE_SIZE } from '@sample-services/users-api/schemas';

/** About what one user takes in the list's JSON: what a batch's buffer and a client's pace are reckoned in. */
export const BYTES_PER_USER = 128;

/**
 * One page of the list, as the database wrote it: the users' JSON objects joined by commas,
 * without brackets, byte for byte what JSON.stringify gives for the same rows (same field
 * order, same escapes), so that Node forwards text instead of building objects.
 */
export interface UserPage {
  /** `{"id":1,"name":…},{"id":2,…}`; empty when no user has a greater id. */
  json: string;
  /** The id of the page's last user; undefined when the page is empty. */
  lastId: number | undefined;
  /** Whether users with an id above lastId exist (when the page was read). */
  more: boolean;
}

/** A batch of a streamed list after its first page. */
export interface UserBatch {
  /** `,{"id":…},{"id":…}`: each user's JSON object after a comma, what follows earlier users in the array; empty when none. */
  body: string | Buffer;
  /** The id of the batch's last user; undefined when the batch is empty. */
  lastId: number | undefined;
  /** Whether users may follow: the batch was full, or the page said so. */
  more: boolean;
}

/** A connection pool's state, read at each scrape (store-metrics.ts). */
export interface PoolStats {
  /** Connections open, idle or in use. */
  total: number;
  idle: number;
  /** Queries waiting for a connection. */
  waiting: number;
}

/** The email is already taken: the database's unique constraint said so. */
export class DuplicateEmailError extends Error {
  override name = 'DuplicateEmailError';
  constructor(readonly email: string) {
    super(`A user with email ${email} already exists`);
  }
}

/**
 * The database could not be reached or did not answer in time. The cause is kept for the log;
 * clients get a 503 because retrying later may succeed.
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
  constructor(cause: unknown) {
    super(`database unavailable: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/**
 * Where users live. Two adapters (PostgreSQL, SQLite) implement it and one test suite
 * checks both. Every method except close creates the table first if that has not
 * succeeded yet, so a database that was down at start-up is set up once it comes back.
 */
export interface UserStore {
  /** Applies the pending migrations (packages/users/migrations); safe when several instances do it at once. */
  init(): Promise<void>;
  /**
   * The users with an id above `after`, ordered by id, at most `limit` of them, as JSON text
   * made by the database itself (see UserPage). One short query: a long list is read as a
   * series of pages (list-stream.ts), each bounded in time and in memory.
   */
  page(after: number, limit: number): Promise<UserPage>;
  /**
   * The next batch of a streamed list, users after `after`, at most `limit` of them, when the
   * store has a faster way to read them than page() (list-stream.ts uses page() otherwise).
   */
  batch?(after: number, limit: number): Promise<UserBatch>;
  /** Stores the user; rejects with DuplicateEmailError when the email is taken. */
  create(user: NewUser): Promise<User>;
  /** True when `SELECT 1` answers within timeoutMs; never rejects, never takes much longer. */
  ping(timeoutMs: number): Promise<boolean>;
  /** Releases connections or the file; the store is unusable afterwards. */
  close(): Promise<void>;
  /** The connection pool's state, for the metrics; only a store with a pool (PostgreSQL) has one. */
  poolStats?: () => PoolStats;
}
