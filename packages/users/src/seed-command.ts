import { ConfigError, type Env } from '@sample-services/kit/config';
import { openUserStore, readStoreConfig } from './open-store.js';
import { DuplicateEmailError, type NewUser } from './user-store.js';

/** The sample users the seed command adds: fixed, so that a second run finds them all there. */
export const SAMPLE_USERS: readonly NewUser[] = [
  { name: 'Ada Lovelace', email: 'ada@example.com' },
  { name: 'Alan Turing', email: 'alan@example.com' },
  { name: 'Grace Hopper', email: 'grace@example.com' },
  { name: 'José Martí', email: 'josé@example.com' },
];

/**
 * The `seed` command of a service that keeps users (`node dist/seed.js`, compose's profile `seed`):
 * adds SAMPLE_USERS to the store its environment names (migrating it first, as the service does),
 * each unless its e-mail is taken under the stores' rule, so running it again adds nothing. One
 * line either way: exit 0 with what it added, 1 when the configuration or the database fails it.
 */
export async function runSeedCommand(name: string, env: Env = process.env): Promise<void> {
  function fail(message: string): never {
    process.stderr.write(`${name}: ${message}\n`);
    process.exit(1);
  }
  let opened: ReturnType<typeof openUserStore>;
  try {
    opened = openUserStore(readStoreConfig(env));
  } catch (error) {
    fail(error instanceof ConfigError ? `invalid configuration: ${error.message}` : (error as Error).message);
  }
  const { store, location } = opened;
  let added = 0;
  try {
    await store.init();
    for (const user of SAMPLE_USERS) {
      added += await store.create(user).then(
        () => 1,
        (error: unknown) => (error instanceof DuplicateEmailError ? 0 : Promise.reject(error)),
      );
    }
  } catch (error) {
    await store.close().catch(() => undefined);
    fail((error as Error).message);
  }
  await store.close();
  const there = SAMPLE_USERS.length - added;
  process.stdout.write(`${name}: users stored in ${location}: ${added} sample users added, ${there} already there\n`);
}
