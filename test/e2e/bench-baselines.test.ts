import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { usePostgres } from '@sample-services/testing/postgres';
import { bareDatabase } from '../../bench/scenarios/database.js';
import { nodeServer, serviceServer, startServer } from '../../bench/server-process.js';

/**
 * The bench's bare database baseline runs the store's queries on the schema the service's migrations
 * make: a baseline answering errors does no write, and every ratio against it compares other work (after
 * migration 0003 it failed every SQLite create, unseen until a run's table showed its errors).
 */
const postgres = await usePostgres();
const dataDir = mkdtempSync(join(tmpdir(), 'bench-baselines-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

async function createAndList(env: Record<string, string>): Promise<void> {
  // The service makes the schema (its migrations), as the bench runs it before the baseline.
  const service = await startServer(serviceServer('database', 'database', env, undefined));
  await service.stop();
  const bare = await startServer(nodeServer('bare database', bareDatabase, env, undefined));
  try {
    const created = await fetch(`${bare.baseUrl}/api/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'Ann', email: 'Ann@Example.com' }),
    });
    expect(created.status).toBe(201);
    expect(await created.json()).toMatchObject({ id: 1, name: 'Ann', email: 'Ann@Example.com', created_at: expect.any(String) });
    const listed = await fetch(`${bare.baseUrl}/api/users`);
    expect(await listed.json()).toEqual([expect.objectContaining({ id: 1, email: 'Ann@Example.com' })]);
  } finally {
    await bare.stop();
  }
}

describe("the bench's bare database baseline on the service's schema", () => {
  it('creates and lists users on SQLite', async () => {
    await createAndList({ DATA_DIR: dataDir });
  });

  it.skipIf(postgres === undefined)('creates and lists users on PostgreSQL', async () => {
    await createAndList({ DATABASE_URL: await postgres!.createDatabase() });
  });
});
