import { afterAll, describe } from 'vitest';
import { createPostgresStore, type UserStore } from '../src/index.js';
import { usePostgres } from '../../../test/support/postgres.js';
import { storeSuite } from './store-suite.js';

const postgres = await usePostgres();

describe.skipIf(postgres === undefined)('PostgreSQL adapter', () => {
  afterAll(() => postgres?.destroy());
  const urlOf = new Map<UserStore, string>();

  storeSuite(
    async () => {
      const url = await postgres!.createDatabase();
      const store = createPostgresStore(url);
      urlOf.set(store, url);
      return store;
    },
    async (store) => createPostgresStore(urlOf.get(store)!),
  );
});
