/**
 * The messages between a SQLite store and its writer thread (sqlite-writer.ts). Types only: the
 * writer runs from its source under Vitest (Node strips the types), so it imports nothing of ours at run time.
 */
import type { NewUser, User } from './user-store.js';

/** What the writer is started with. */
export interface WriterData {
  /** The database file, already migrated by the store. */
  file: string;
}

/** An error as it crosses the thread boundary: SQLite's code is what says "unavailable" or "bug". */
export interface WriterError {
  message: string;
  code: string | undefined;
}

/** A user to insert with the key its e-mail is unique by (emailKey of @sample-services/users-api, computed by the store). */
export interface KeyedUser extends NewUser {
  emailKey: string;
}

export type WriterRequest =
  { kind: 'write'; id: number; users: KeyedUser[] } | { kind: 'ping'; id: number } | { kind: 'close'; id: number };

/** One user of a written batch: stored, its email already taken, or its own statement failed. */
export type RowOutcome = { user: User } | { duplicate: true } | { error: WriterError };

export type WriterReply =
  | { kind: 'written'; id: number; rows: RowOutcome[] }
  | { kind: 'failed'; id: number; error: WriterError }
  | { kind: 'pong'; id: number; ok: boolean }
  | { kind: 'closed'; id: number };
