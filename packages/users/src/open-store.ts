import { join, resolve } from 'node:path';
import { ConfigError, readOptionalUrl, readString, type Env } from '@svc/kit';
import { createPostgresStore, type PostgresStoreOptions } from './postgres-store.js';
import { createSqliteStore, SQLITE_FILE } from './sqlite-store.js';
import type { UserStore } from './user.js';

/** Where users live: PostgreSQL when a URL is given, otherwise a SQLite file in dataDir. */
export interface StoreConfig {
  /** DATABASE_URL: `postgresql://user:password@host:port/db` (also `postgres://`). */
  databaseUrl: URL | undefined;
  /** DATA_DIR (default ./data), absolute: the SQLite file's directory when there is no URL. */
  dataDir: string;
}

/** The store's variables, for the config reader of a service that keeps users. */
export function readStoreConfig(env: Env): StoreConfig {
  return {
    databaseUrl: readOptionalUrl(env, 'DATABASE_URL', ['postgresql:', 'postgres:']),
    dataDir: resolve(readString(env, 'DATA_DIR', './data')),
  };
}

/**
 * Opens the configured store and says where the data lives (without the password) for the log.
 * An unusable DATA_DIR is a ConfigError, reported at start-up.
 */
export function openUserStore(config: StoreConfig, options: PostgresStoreOptions = {}): { store: UserStore; location: string } {
  if (config.databaseUrl !== undefined) {
    const url = config.databaseUrl;
    return { store: createPostgresStore(url.href, options), location: `PostgreSQL at ${url.host}${url.pathname}` };
  }
  const location = `SQLite file ${join(config.dataDir, SQLITE_FILE)}`;
  try {
    return { store: createSqliteStore(config.dataDir), location };
  } catch (error) {
    // Typically a directory that is not writable: a start-up problem the operator must fix.
    throw new ConfigError(`DATA_DIR: cannot open the ${location}: ${(error as Error).message}`);
  }
}
