import { ConfigError, type Env } from '@sample-services/kit/config';
import { openUserStore, readStoreConfig } from './open-store.js';

/**
 * The `migrate` command of a service that keeps users (`node dist/migrate.js`, run by compose's
 * migrate service and Kubernetes' init container): applies the pending migrations of the store its
 * environment names, as the service does at start, and exits. One line either way: exit 0 once the
 * schema is current, 1 when the configuration is wrong, a migration fails or the database cannot be
 * reached (a failed migration leaves nothing of itself; the command can be run again).
 */
export async function runMigrateCommand(name: string, env: Env = process.env): Promise<void> {
  function fail(message: string): never {
    process.stderr.write(`${name}: ${message}\n`);
    process.exit(1);
  }
  let applied: string[] = [];
  let opened: ReturnType<typeof openUserStore>;
  try {
    opened = openUserStore(readStoreConfig(env), { onMigrated: (names) => (applied = names) });
  } catch (error) {
    fail(error instanceof ConfigError ? `invalid configuration: ${error.message}` : (error as Error).message);
  }
  const { store, location } = opened;
  try {
    await store.init();
  } catch (error) {
    await store.close().catch(() => undefined);
    fail((error as Error).message);
  }
  await store.close();
  const done = applied.length > 0 ? `migrations applied: ${applied.join(', ')}` : 'no migration pending';
  process.stdout.write(`${name}: users stored in ${location}: ${done}\n`);
}
