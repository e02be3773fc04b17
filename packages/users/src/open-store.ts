import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, readInt, readOptionalUrl, readString, type Env } from '@sample-services/kit/config';
import { MigrationError } from './migrations.js';
import { createPostgresStore, DEFAULT_POOL_SIZE, type PostgresStoreOptions } from './postgres-store.js';
import { createSqliteStore, SQLITE_FILE } from './sqlite-store.js';
import type { UserStore } from './user-store.js';

/** Where users live: PostgreSQL when a URL is given, otherwise a SQLite file in dataDir. */
export interface StoreConfig {
  /**
   * DATABASE_URL: `postgresql://user:password@host:port/db` (also `postgres://`), or the URL held in
   * the file DATABASE_URL_FILE names; with the password of DATABASE_PASSWORD_FILE when that is set.
   */
  databaseUrl: URL | undefined;
  /** DATA_DIR (default ./data), absolute: the SQLite file's directory when there is no URL. */
  dataDir: string;
  /** DB_POOL_SIZE: connections each instance keeps to PostgreSQL (default DEFAULT_POOL_SIZE). */
  poolSize: number;
}

/** The store's variables, for the config reader of a service that keeps users. */
export function readStoreConfig(env: Env): StoreConfig {
  const databaseUrl = readDatabaseUrl(env);
  // Read whether or not a URL is set: every variable a reader knows is looked up on each call.
  const passwordFile = readString(env, 'DATABASE_PASSWORD_FILE', '');
  if (passwordFile !== '') {
    if (databaseUrl === undefined)
      throw new ConfigError('DATABASE_PASSWORD_FILE is set but DATABASE_URL is not: the password is for that URL');
    if (databaseUrl.password !== '') {
      throw new ConfigError('DATABASE_PASSWORD_FILE is set but DATABASE_URL has a password too: leave it out of the URL');
    }
    // The URL's user info is percent-encoded; the driver decodes it (decodeURIComponent).
    databaseUrl.password = encodeURIComponent(readSecretFile('DATABASE_PASSWORD_FILE', passwordFile));
  }
  return {
    databaseUrl,
    dataDir: resolve(readString(env, 'DATA_DIR', './data')),
    // Times the replicas, within the server's max_connections (100 by default) less what others need.
    poolSize: readInt(env, 'DB_POOL_SIZE', DEFAULT_POOL_SIZE, 2, 1000),
  };
}

/**
 * The password of deploy/compose/dev-db-password, the original tutorial's: the stacks' default when no
 * password file is given, known to anyone who reads the repository.
 */
export const DEVELOPMENT_PASSWORD = 'password';

/** Whether PostgreSQL is reached with the development password, however it was given (URL, file or Secret). */
export function usesDevelopmentPassword(config: StoreConfig): boolean {
  const password = config.databaseUrl?.password;
  if (password === undefined || password === '') return false;
  try {
    return decodeURIComponent(password) === DEVELOPMENT_PASSWORD;
  } catch {
    // Not valid percent-encoding, so not the encoded development password either.
    return password === DEVELOPMENT_PASSWORD;
  }
}

const postgresProtocols = ['postgresql:', 'postgres:'];

/**
 * DATABASE_URL, or the URL in DATABASE_URL_FILE (a secret holding the whole URL, password included),
 * never both. A URL from a file is never quoted in a message: it may hold the password.
 */
function readDatabaseUrl(env: Env): URL | undefined {
  const fromEnv = readOptionalUrl(env, 'DATABASE_URL', postgresProtocols);
  const urlFile = readString(env, 'DATABASE_URL_FILE', '');
  if (urlFile === '') return fromEnv;
  if (fromEnv !== undefined) throw new ConfigError('DATABASE_URL and DATABASE_URL_FILE are both set: keep one of them');
  const text = readSecretFile('DATABASE_URL_FILE', urlFile).trim();
  if (text === '') throw new ConfigError(`DATABASE_URL_FILE: "${urlFile}" is empty`);
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new ConfigError(`DATABASE_URL_FILE: "${urlFile}" does not hold a URL`);
  }
  if (!postgresProtocols.includes(url.protocol)) {
    throw new ConfigError(`DATABASE_URL_FILE: the URL in "${urlFile}" must start with postgresql:// or postgres://`);
  }
  return url;
}

/**
 * The text of a secret file (a Docker or Kubernetes secret, e.g. /run/secrets/db-password) without
 * one trailing newline, as `echo` or an editor leaves it. Its content is never in a message.
 */
function readSecretFile(variable: string, path: string): string {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    const reason = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    throw new ConfigError(`${variable}: cannot read "${path}" (${reason})`);
  }
  const content = text.replace(/\r?\n$/, '');
  if (content === '') throw new ConfigError(`${variable}: "${path}" is empty`);
  return content;
}

/**
 * Opens the configured store and says where the data lives (without the password) for the log.
 * An unusable DATA_DIR is a ConfigError, reported at start-up.
 */
export function openUserStore(config: StoreConfig, options: PostgresStoreOptions = {}): { store: UserStore; location: string } {
  const { migrationsDir, onMigrated } = options;
  if (config.databaseUrl !== undefined) {
    const url = config.databaseUrl;
    return {
      store: createPostgresStore(url.href, { poolSize: config.poolSize, ...options }),
      location: `PostgreSQL at ${url.host}${url.pathname}`,
    };
  }
  const location = `SQLite file ${join(config.dataDir, SQLITE_FILE)}`;
  try {
    return { store: createSqliteStore(config.dataDir, { migrationsDir, onMigrated }), location };
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    // Typically a directory that is not writable: a start-up problem the operator must fix.
    throw new ConfigError(`DATA_DIR: cannot open the ${location}: ${(error as Error).message}`);
  }
}
