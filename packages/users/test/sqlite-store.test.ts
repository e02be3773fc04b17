import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe } from 'vitest';
import { createSqliteStore, type UserStore } from '../src/index.js';
import { storeSuite } from './store-suite.js';

describe('SQLite adapter', () => {
  const dirs: string[] = [];
  const dirOf = new Map<UserStore, string>();
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  storeSuite(
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'svc-sqlite-'));
      dirs.push(dir);
      const store = createSqliteStore(join(dir, 'nested', 'data'));
      dirOf.set(store, join(dir, 'nested', 'data'));
      return store;
    },
    async (store) => createSqliteStore(dirOf.get(store)!),
  );
});
