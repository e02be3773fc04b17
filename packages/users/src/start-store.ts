import type { Logger } from '@sample-services/kit/logger';
import { MigrationError } from './migrations.js';
import { openUserStore, usesDevelopmentPassword, type StoreConfig } from './open-store.js';
import type { UserStore } from './user-store.js';

/** The warning a service logs at start when PostgreSQL is reached with the development password. */
export const DEVELOPMENT_PASSWORD_WARNING =
  'DEVELOPMENT DATABASE PASSWORD: PostgreSQL is reached with the password of deploy/compose/dev-db-password, which anyone can read; ' +
  'for anything but a local run give the stack a password file of its own (DB_PASSWORD_FILE; docs/operations.md, Secrets)';

/**
 * Opens the store the environment asks for and applies its pending migrations before the service
 * listens. A database that is not reachable yet does not stop the service: it starts, reports the
 * database as disconnected, and migrates on the first call once the database answers. A migration
 * the database refuses does stop it (a MigrationError, one line naming the migration).
 */
export async function startUserStore(config: StoreConfig, logger: Logger): Promise<UserStore> {
  // Said where every log collector sees it: a stack started without a password file of its own.
  if (usesDevelopmentPassword(config)) logger.warn(DEVELOPMENT_PASSWORD_WARNING);
  const { store, location } = openUserStore(config, {
    onIdleError: (error) => logger.warn({ err: error }, 'database connection lost; it will be replaced'),
    onMigrated: (applied) => {
      if (applied.length > 0) logger.info({ migrations: applied }, `migrations applied: ${applied.join(', ')}`);
    },
  });
  try {
    await store.init();
    logger.info(`users stored in ${location}`);
  } catch (error) {
    if (error instanceof MigrationError) throw error;
    logger.warn({ err: error }, `users stored in ${location}, which is not reachable yet; will retry on each request`);
  }
  return store;
}
