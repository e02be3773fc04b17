/**
 * Variant C as real processes, as `npm start -- two-tier` runs it: the compiled backend on a SQLite
 * file in a temporary directory, and the compiled frontend (which serves the page from its dist)
 * pointed at it. The backend can stop and start again on the same port.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '@sample-services/users/sqlite-store';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

export interface TwoTier {
  /** The frontend's origin, where the page is. */
  url: string;
  stopBackend: () => Promise<void>;
  /** Starts the backend again, on the port the frontend was given. */
  startBackend: () => Promise<void>;
  stop: () => Promise<void>;
}

/** Stores these users before the backend starts (it has no create operation of its own). */
export async function storeUsers(dataDir: string, users: readonly { name: string; email: string }[]): Promise<void> {
  const store = createSqliteStore(dataDir);
  try {
    for (const user of users) await store.create(user);
  } finally {
    await store.close();
  }
}

/** Starts both, after `seed` has filled the backend's data directory. */
export async function startTwoTier(seed: (dataDir: string) => Promise<void> = async () => undefined): Promise<TwoTier> {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-page-'));
  await seed(dataDir);
  let backend: ServiceProcess | undefined = await startService('backend', { DATA_DIR: dataDir });
  const port = backend.port;
  const frontend = await startService('frontend', { BACKEND_URL: backend.baseUrl });
  return {
    url: frontend.baseUrl,
    stopBackend: async () => {
      await backend?.stop();
      backend = undefined;
    },
    startBackend: async () => {
      backend = await startService('backend', { DATA_DIR: dataDir, PORT: String(port) });
    },
    stop: async () => {
      await frontend.stop();
      await backend?.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
