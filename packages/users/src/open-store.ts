import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, readOptionalUrl, readString, type Env } from '@svc/kit';
import { createPostgresStore, type PostgresStoreOptions } from './postgres-store.js';
import { createSqliteStore, SQLITE_FILE } from './sqlite-store.js';
import type { UserStore } from './user.js';

/** Where users live: PostgreSQL when a URL is given, otherwise a SQLite file in dataDir. */
export interface StoreConfig {
  /**
   * DATABASE_URL: `postgresql://user:password@host:port/db` (also `postgres://`), with the password
   * of DATABASE_PASSWORD_FILE when that is set.
   */
  databaseUrl: URL | undefined;
  /** DATA_DIR (default ./data), absolute: the SQLite file's directory when there is no URL. */
  dataDir: string;
}

/** The store's variables, for the config reader of a service that keeps users. */
export function readStoreConfig(env: Env): StoreConfig {
  const databaseUrl = readOptionalUrl(env, 'DATABASE_URL', ['postgresql:', 'postgres:']);
  // Read whether or not DATABASE_URL is set: every variable a reader knows is looked up on each call.
  const passwordFile = readString(env, 'DATABASE_PASSWORD_FILE', '');
  if (passwordFile !== '') {
    if (databaseUrl === undefined)
      throw new ConfigError('DATABASE_PASSWORD_FILE is set but DATABASE_URL is not: the password is for that URL');
    if (databaseUrl.password !== '') {
      throw new ConfigError('DATABASE_PASSWORD_FILE is set but DATABASE_URL has a password too: leave it out of the URL');
    }
    // The URL's user info is percent-encoded; the driver decodes it (decodeURIComponent).
    databaseUrl.password = encodeURIComponent(readPasswordFile(passwordFile));
  }
  return { databaseUrl, dataDir: resolve(readString(env, 'DATA_DIR', './data')) };
}

/**
 * The password in DATABASE_PASSWORD_FILE (a Docker or Kubernetes secret, e.g. /run/secrets/db-password):
 * the file's text without one trailing newline, as `echo` or an editor leaves it. Never in a message.
 */
function readPasswordFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError(`DATABASE_PASSWORD_FILE: cannot read "${path}" (${reason})`);
  }
  const password = text.replace(/\r?\n$/, '');
  if (password === '') throw new ConfigError(`DATABASE_PASSWORD_FILE: "${path}" is empty`);
  return password;
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
