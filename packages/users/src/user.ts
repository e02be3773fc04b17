import type { User } from './schemas.js';

export type { User };

/** What a client supplies to create a user, already checked by parseNewUser. */
export interface NewUser {
  name: string;
  email: string;
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
  /** Every user, ordered by id. */
  list(): Promise<User[]>;
  /** Stores the user; rejects with DuplicateEmailError when the email is taken. */
  create(user: NewUser): Promise<User>;
  /** True when `SELECT 1` answers within timeoutMs; never rejects, never takes much longer. */
  ping(timeoutMs: number): Promise<boolean>;
  /** Releases connections or the file; the store is unusable afterwards. */
  close(): Promise<void>;
}
