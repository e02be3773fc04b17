import { join, resolve } from 'node:path';
import { ConfigError, readString, readUrl, type Env } from '@svc/kit';
import { createPostgresStore, type PostgresStoreOptions } from './postgres-store.js';
import { createSqliteStore, SQLITE_FILE } from './sqlite-store.js';
import type { UserStore } from './user.js';

export interface OpenedStore {
  store: UserStore;
  /** Where the data lives, without the password, for the start-up log. */
  location: string;
}

/**
 * The store the environment asks for: PostgreSQL when DATABASE_URL is set
 * (`postgresql://user:password@host:port/db`, also `postgres://`), otherwise a SQLite file
 * in DATA_DIR (default ./data). A malformed URL or an unusable DATA_DIR is a ConfigError,
 * reported at start-up.
 */
export function openUserStore(env: Env, options: PostgresStoreOptions = {}): OpenedStore {
  if (env.DATABASE_URL?.trim()) {
    const url = readUrl(env, 'DATABASE_URL', '', ['postgresql:', 'postgres:']);
    return {
      store: createPostgresStore(url.href, options),
      location: `PostgreSQL at ${url.host}${url.pathname}`,
    };
  }
  const dataDir = resolve(readString(env, 'DATA_DIR', './data'));
  const location = `SQLite file ${join(dataDir, SQLITE_FILE)}`;
  try {
    return { store: createSqliteStore(dataDir), location };
  } catch (error) {
    // Typically a directory that is not writable: a start-up problem the operator must fix.
    throw new ConfigError(`DATA_DIR: cannot open the ${location}: ${(error as Error).message}`);
  }
}
