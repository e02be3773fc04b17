import { execFile } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { startLocalPostgres, type TestPostgres } from '@sample-services/testing/postgres';

const run = promisify(execFile);

/**
 * A throwaway PostgreSQL cluster (the tests' helper) whose server processes run on `cpus`,
 * away from the service under test: the postmaster is pinned, and the backends it forks for
 * each connection inherit that. Undefined when PostgreSQL cannot be started here.
 */
export async function benchPostgres(cpus: string | undefined): Promise<TestPostgres | undefined> {
  let server: TestPostgres;
  try {
    server = await startLocalPostgres();
  } catch (error) {
    process.stderr.write(`bench: PostgreSQL scenarios skipped: ${(error as Error).message}\n`);
    return undefined;
  }
  if (cpus !== undefined) {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    const { rows } = await client.query<{ data_directory: string }>('SHOW data_directory');
    await client.end();
    const pid = readFileSync(join(rows[0]?.data_directory ?? '', 'postmaster.pid'), 'utf8').split('\n')[0] ?? '';
    await run('taskset', ['-a', '-p', '-c', cpus, pid]);
  }
  return server;
}
