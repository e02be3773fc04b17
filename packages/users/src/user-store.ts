import type { NewUserBody, User } from '@svc/users-api';

export type { User };

/** What a client supplies to create a user, already checked against NewUserBody and trimmed. */
export type NewUser = NewUserBody;

/** The largest id either database hands out, and the most users one page holds: limits of the HTTP contract. */
export { MAX_ID, MAX_PAGE_SIZE } from '@svc/users-api';

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
  /** Creates the table when absent; safe when several instances do it at once. */
  init(): Promise<void>;
  /**
   * The users with an id above `after`, ordered by id, at most `limit` of them: one short query, so
   * a long list is read as a series of pages (list-stream.ts), each bounded in time and in memory.
   */
  page(after: number, limit: number): Promise<User[]>;
  /** Stores the user; rejects with DuplicateEmailError when the email is taken. */
  create(user: NewUser): Promise<User>;
  /** True when `SELECT 1` answers within timeoutMs; never rejects, never takes much longer. */
  ping(timeoutMs: number): Promise<boolean>;
  /** Releases connections or the file; the store is unusable afterwards. */
  close(): Promise<void>;
  /** The connection pool's state, for the metrics; only a store with a pool (PostgreSQL) has one. */
  poolStats?: () => PoolStats;
}
