import type { Logger } from '@svc/kit';
import { openUserStore, type StoreConfig } from './open-store.js';
import type { UserStore } from './user-store.js';

/**
 * Opens the store the environment asks for and creates the table before the service listens.
 * A database that is not reachable yet does not stop the service: it starts, reports the
 * database as disconnected, and creates the table on the first call once the database answers.
 */
export async function startUserStore(config: StoreConfig, logger: Logger): Promise<UserStore> {
  const { store, location } = openUserStore(config, {
    onIdleError: (error) => logger.warn({ err: error }, 'database connection lost; it will be replaced'),
  });
  try {
    await store.init();
    logger.info(`users stored in ${location}`);
  } catch (error) {
    logger.warn({ err: error }, `users stored in ${location}, which is not reachable yet; will retry on each request`);
  }
  return store;
}
