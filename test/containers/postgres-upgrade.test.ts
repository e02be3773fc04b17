import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ListedUser } from '@sample-services/testing/contract/users';
import { listAllUsers } from '@sample-services/testing/write-load';
import { databaseProject, ready, runScript, webUrl } from './support/database-project.js';
import { compose, docker, dockerResult, repoRoot } from './support/docker.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
const USERS = 300;
/** Beyond ASCII: accents, other scripts, right-to-left, a combining mark and a character outside the BMP. */
const names = ['Zoë Ærøskøbing', 'Σωκράτης', 'Дмитрий Шостакович', '李小龍', 'محمد بن موسى', 'Ngô Bảo Châu', 'E\u0301tienne', '🙂 Smiley'];
/** Every third name and every fifth email non-ASCII (internationalized addresses are valid too). */
const userOf = (i: number, run: string): { name: string; email: string } => ({
  name: i % 3 === 0 ? `${names[(i / 3) % names.length] ?? ''} ${i}` : `User ${i}`,
  email: i % 5 === 0 ? `zoë.${i}.${run}@bücher.example` : `upgrade.${i}.${run}@example.com`,
});
/** docs/backup-and-restore.md's queries, as the stack's own user in its own database. */
const psqlCommand = (query: string): string => `psql -U "$POSTGRES_USER" -d "$POSTGRES_DB" -tAc "${query}"`;
/** Its listing of every row, in UTC whatever the servers' time zones. */
const LIST_ROWS = `PGTZ=UTC ${psqlCommand('SELECT * FROM users ORDER BY id')}`;

interface Mount {
  Type: string;
  Name?: string;
  Destination: string;
}

async function createUser(url: string, body: { name: string; email: string }): Promise<ListedUser> {
  const res = await fetch(`${url}/api/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  if (res.status !== 201) throw new Error(`POST ${url}/api/users answered ${res.status}: ${await res.text()}`);
  return (await res.json()) as ListedUser;
}

/** USERS creates, 8 at a time; the users as the 201s answered them. */
async function createUsers(url: string): Promise<ListedUser[]> {
  const run = randomBytes(3).toString('hex');
  const created: ListedUser[] = [];
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < USERS; i = next++) created.push(await createUser(url, userOf(i, run)));
  };
  await Promise.all(Array.from({ length: 8 }, worker));
  return created.sort((a, b) => a.id - b.id);
}

describe.skipIf(stage.skipReason !== undefined)(
  'PostgreSQL major upgrade (docs/backup-and-restore.md): 15 to 18 by dump and restore',
  () => {
    const project = `pgup-${stage.runId}`;
    let dir = '';
    let on15: string[] = [];
    let on18: string[] = [];
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `postgres-upgrade-${stage.runId}-`));
      on15 = await databaseProject(dir, project, 'tester', stage.tag);
      on18 = [...on15, '-f', join(repoRoot, 'deploy/compose/compose.postgres-18.yml')];
    });
    // Each file set's down -v removes the volumes it declares: 18's, then 15's (which the override leaves out).
    afterAll(async () => {
      for (const options of [on18, on15]) {
        if (options.length > 0)
          await compose([...options, 'down', '-v', '--remove-orphans'], { timeoutMs: 180_000 }).catch(() => undefined);
      }
      await dockerResult(['volume', 'rm', `${project}_postgres-data`, `${project}_postgres-18-data`, `${project}_app-logs`]);
      if (dir !== '') await rm(dir, { recursive: true, force: true });
    }, 300_000);

    it('backup.sh on 15, restore.sh on 18 in a new volume of the same project: every user as before, new ids after them', async () => {
      const started = performance.now();
      // Not --wait: web's health check is not this test's subject. up still waits for db's health
      // (depends_on); ready() then polls web itself.
      await compose([...on15, 'up', '-d'], { timeoutMs: 180_000 });
      const url = await webUrl(on15);
      await ready([url]);
      const created = await createUsers(url);
      const before = await listAllUsers(url);
      expect(before).toEqual(created);
      console.log(`postgres upgrade: 15 up and ${USERS} users created in ${seconds(performance.now() - started)}`);

      // The documented steps: writers stopped, dump and the row listing on 15, down keeping 15's volume, restore on 18.
      let step = performance.now();
      await compose([...on15, 'stop', 'web']);
      const dump = join(dir, 'users-15.dump');
      console.log(await runScript('deploy/compose/backup.sh', [...on15, dump]));
      const rows15 = await compose([...on15, 'exec', '-T', 'db', 'sh', '-c', LIST_ROWS]);
      await compose([...on15, 'down']);
      console.log(await runScript('deploy/compose/restore.sh', [...on18, dump]));
      console.log(`postgres upgrade: stop, backup, down and restore on 18 in ${seconds(performance.now() - step)}`);

      step = performance.now();
      const psql = (query: string): Promise<string> => compose([...on18, 'exec', '-T', 'db', 'sh', '-c', psqlCommand(query)]);
      const mountsOf = async (): Promise<Mount[]> =>
        JSON.parse(await docker(['inspect', '--format', '{{json .Mounts}}', await compose([...on18, 'ps', '-q', 'db'])])) as Mount[];
      const oldVolume = `${project}_postgres-data:/data:ro`;
      // Independent reads, at once: each client call costs a second or more on a busy machine.
      const [version, dataDirectory, mounts, oldVersion, rows18, restoredUrl] = await Promise.all([
        psql('SHOW server_version'),
        psql('SHOW data_directory'),
        mountsOf(),
        docker(['run', '--rm', '-v', oldVolume, 'postgres:15', 'cat', '/data/PG_VERSION']),
        compose([...on18, 'exec', '-T', 'db', 'sh', '-c', LIST_ROWS]),
        webUrl(on18),
      ]);
      expect(version).toMatch(/^18\./);
      expect(dataDirectory).toBe('/var/lib/postgresql/18/docker');
      // The override's mount replaced the stack's: one volume, the new one, where 18 looks for it.
      expect(mounts.filter((m) => m.Type === 'volume').map((m) => [m.Name, m.Destination])).toEqual([
        [`${project}_postgres-18-data`, '/var/lib/postgresql'],
      ]);
      // The way back: 15's volume is still there, with 15's data directory.
      expect(oldVersion).toBe('15');
      expect(rows15.split('\n')).toHaveLength(USERS);
      expect(rows18).toBe(rows15);
      await ready([restoredUrl]);
      expect(await listAllUsers(restoredUrl)).toEqual(before);
      const next = await createUser(restoredUrl, {
        name: 'Après la mise à niveau',
        email: `after.${randomBytes(4).toString('hex')}@example.com`,
      });
      expect(next.id).toBeGreaterThan(Math.max(...before.map((u) => u.id)));
      console.log(`postgres upgrade: checks on 18 in ${seconds(performance.now() - step)}; ${seconds(performance.now() - started)} in all`);
    }, 300_000);
  },
);
