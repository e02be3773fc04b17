import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { usePostgres } from '@sample-services/testing/postgres';
import { startService } from '@sample-services/testing/service-process';
import { listAllUsers, missingAcknowledged, startWriteLoad } from '@sample-services/testing/write-load';

const postgres = await usePostgres();
const dataDir = mkdtempSync(join(tmpdir(), 'svc-b-kill-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** Client loops, each with one create in flight: enough that the store writes them in batches. */
const LOOPS = 32;

/**
 * Variant B under a create load, killed with SIGKILL once `acknowledged` creates were answered 201,
 * then started again on the same data: every user answered 201 must be listed as its answer gave it.
 */
async function killMidLoad(label: string, env: NodeJS.ProcessEnv, acknowledged: number): Promise<void> {
  const service = await startService('database', env);
  const load = startWriteLoad([service.baseUrl], LOOPS);
  try {
    await expect.poll(() => load.acknowledged.length, { timeout: 60_000, interval: 10 }).toBeGreaterThanOrEqual(acknowledged);
    expect(await service.stop('SIGKILL')).toBeNull();
  } finally {
    await load.stop();
    await service.stop('SIGKILL');
  }
  const restarted = await startService('database', env);
  try {
    const listed = await listAllUsers(restarted.baseUrl);
    const missing = missingAcknowledged(load.acknowledged, listed);
    console.log(
      `${label}: killed after ${load.acknowledged.length} creates answered 201, ${missing.length} of them missing after the restart; ` +
        `${listed.length} users listed; other answers ${JSON.stringify(load.failures)}`,
    );
    expect(missing).toEqual([]);
    // The only other outcome: requests cut by the kill (fetch fails), never an error answer.
    expect(Object.keys(load.failures).filter((failure) => failure !== 'TypeError')).toEqual([]);
    // Stored but never answered: at most the creates in flight when the process died.
    expect(listed.length - load.acknowledged.length).toBeLessThanOrEqual(LOOPS);
  } finally {
    await restarted.stop();
  }
}

describe('variant B killed with SIGKILL in the middle of a create load', () => {
  it('keeps every user it answered 201 on SQLite', () => killMidLoad('SQLite kill -9', { DATA_DIR: join(dataDir, 'sqlite') }, 2_000));

  it.skipIf(postgres === undefined)('keeps every user it answered 201 on PostgreSQL', async () => {
    try {
      await killMidLoad('PostgreSQL kill -9', { DATABASE_URL: await postgres!.createDatabase() }, 2_000);
    } finally {
      await postgres?.destroy();
    }
  });
});
