import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '@sample-services/users/sqlite-store';
import type { UserStore } from '@sample-services/users/user-store';

export interface TemporaryStore {
  store: UserStore;
  /** Removes the database's directory; call it once the store is closed (an app closes its store). */
  remove: () => void;
}

/** A SQLite user store in a fresh temporary directory: a real database for in-process tests. */
export function temporarySqliteStore(): TemporaryStore {
  const dir = mkdtempSync(join(tmpdir(), 'svc-test-store-'));
  return { store: createSqliteStore(dir), remove: () => rmSync(dir, { recursive: true, force: true }) };
}
