import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { openSync, closeSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { ListedUser } from '@sample-services/testing/contract/users';
import { checkRestore, listAllUsers, restoreSummary, startWriteLoad, type WriteLoad } from '@sample-services/testing/write-load';
import { databaseProject, ready, runScript, webUrl } from './support/database-project.js';
import { compose, docker, dockerBin, dockerResult, publishedUrl, repoRoot, waitFor, waitHealthy } from './support/docker.js';
import { imageOf } from './support/images.js';
import { removeStack, running, taskUrl, tasksOf, useSingleNodeSwarm } from './support/single-node-swarm.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;
/** Users already there when the load starts: enough that each backup copies megabytes while creates go on. */
const SEEDED = 100_000;
const seedSql = (count: number): string =>
  `INSERT INTO users (name, email) SELECT 'Seed ' || i, 'seed' || i || '@example.com' FROM generate_series(1, ${count}) i`;

/** `docker <args>` reading `file` on its stdin (docker run -i), as a shell's `< file` would. */
function dockerFromFile(args: string[], file: string): Promise<void> {
  const input = openSync(file, 'r');
  return new Promise<void>((resolve, reject) => {
    const child = spawn(dockerBin, args, { stdio: [input, 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`docker ${args.join(' ')} exited ${code}: ${stderr}`))));
  }).finally(() => closeSync(input));
}

interface Drill {
  existing: ListedUser[];
  load: WriteLoad;
  began: number;
  ended: number;
}

/**
 * The load and the backup: the users there before, then creates in 4 loops; once 300 are answered
 * the backup runs (began and ended are taken around it); then 100 more creates sent after it ended.
 */
async function backupDuringWrites(urls: string[], takeBackup: () => Promise<void>): Promise<Drill> {
  const existing = await listAllUsers(urls[0] ?? '');
  const load = startWriteLoad(urls);
  let began = 0;
  let ended = 0;
  try {
    await load.acknowledgedSince(0, 300);
    began = Date.now();
    await takeBackup();
    ended = Date.now();
    await load.acknowledgedSince(ended, 100);
  } finally {
    await load.stop();
  }
  return { existing, load, began, ended };
}

/**
 * What every drill asserts of the restored service: all the users there before the load and every
 * one answered 201 before the backup began, each as it was; no other user, none sent after the
 * backup ended; writes went on during the backup; a new user gets an id after the restored ones.
 */
async function expectRestored(label: string, drill: Drill, restoredUrl: string, restoreMs: number): Promise<void> {
  const restored = await listAllUsers(restoredUrl);
  const check = checkRestore(drill.existing, drill.load.acknowledged, restored, drill);
  console.log(restoreSummary(label, check, drill.ended - drill.began, restoreMs));
  expect(drill.load.failures, 'every create during the drill answered 201').toEqual({});
  expect(drill.existing.length).toBeGreaterThanOrEqual(SEEDED);
  expect(check.before).toBeGreaterThanOrEqual(300);
  expect(check.during, 'creates answered while the backup ran').toBeGreaterThan(0);
  expect(check.after).toBeGreaterThanOrEqual(100);
  expect({ missing: check.missing, unknown: check.unknown, late: check.late }).toEqual({ missing: [], unknown: [], late: [] });
  const res = await fetch(`${restoredUrl}/api/users`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'After the restore', email: `after-restore-${randomBytes(4).toString('hex')}@example.com` }),
  });
  expect(res.status).toBe(201);
  expect(((await res.json()) as ListedUser).id).toBeGreaterThan(Math.max(...restored.map((u) => u.id)));
}

describe.skipIf(stage.skipReason !== undefined)(
  'backup and restore drill: a backup taken during writes, restored into a fresh volume',
  () => {
    let dir = '';
    const fileStarted = performance.now();
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), `backup-restore-${stage.runId}-`));
    });
    afterAll(async () => {
      if (dir !== '') await rm(dir, { recursive: true, force: true });
      console.log(`backup-restore.test.ts: ${seconds(performance.now() - fileStarted)} in all`);
    });

    describe('compose database stack (PostgreSQL): deploy/compose/backup.sh, then restore.sh into another project', () => {
      /** Compose options of a project of deploy/compose/compose.database.yml: its own user, password file and free ports. */
      const projects: string[][] = [];
      const openProject = async (name: string, user: string): Promise<string[]> => {
        const options = await databaseProject(dir, `bk-${name}-${stage.runId}`, user, stage.tag);
        projects.push(options);
        return options;
      };
      afterAll(async () => {
        for (const options of projects)
          await compose([...options, 'down', '-v', '--remove-orphans'], { timeoutMs: 180_000 }).catch(() => undefined);
      }, 300_000);

      it('backup.sh during writes, restore.sh into a new project: every user acknowledged before it began, as answered', async () => {
        const source = await openProject('source', 'tester');
        let started = performance.now();
        await compose([...source, 'up', '-d', '--wait'], { timeoutMs: 180_000 });
        const url = await webUrl(source);
        await ready([url]);
        console.log(`compose PostgreSQL drill: source stack up and ready in ${seconds(performance.now() - started)}`);
        await listAllUsers(url); // the service creates its table on its first query
        await compose([...source, 'exec', '-T', 'db', 'psql', '-U', 'tester', '-d', 'flaskapp', '-tAc', seedSql(SEEDED)], {
          timeoutMs: 120_000,
        });

        const dump = join(dir, 'users.dump');
        const drill = await backupDuringWrites([url], async () =>
          console.log(await runScript('deploy/compose/backup.sh', [...source, dump])),
        );

        const restored = await openProject('restored', 'restorer');
        started = performance.now();
        console.log(await runScript('deploy/compose/restore.sh', [...restored, dump]));
        const restoredUrl = await webUrl(restored);
        await ready([restoredUrl]);
        await expectRestored('compose PostgreSQL', drill, restoredUrl, performance.now() - started);
      }, 600_000);
    });

    describe('SQLite (variant B by docker run on a named volume): backup.js through docker exec, the file into a fresh volume', () => {
      const image = imageOf('database', stage.tag);
      const name = (what: string): string => `bk-sqlite-${what}-${stage.runId}`;
      const [sourceVolume, restoredVolume, sourceContainer, restoredContainer] = [
        name('data'),
        name('restored-data'),
        name('web'),
        name('restored-web'),
      ];
      /** variant B on `volume` at /app/data (no DATABASE_URL: SQLite), healthy, and its URL. */
      const runService = async (container: string, volume: string): Promise<string> => {
        await docker(['run', '-d', '--name', container, '-v', `${volume}:/app/data`, '-p', '127.0.0.1:0:5000', image]);
        await waitHealthy(container, 60_000);
        return publishedUrl(container, 5000);
      };
      afterAll(async () => {
        await dockerResult(['rm', '--force', sourceContainer, restoredContainer]);
        await dockerResult(['volume', 'rm', sourceVolume, restoredVolume]);
      });

      it('backup.js during writes, the file into a new volume: every user acknowledged before it began, as answered', async () => {
        const url = await runService(sourceContainer, sourceVolume);
        await listAllUsers(url);
        // Beside the service, on its file, as the seeding of the PostgreSQL drill: one statement, with a busy timeout;
        // with the key the service would write (email_key, migration 0003 requires it): these e-mails are their own.
        const seed = `const Database = require('better-sqlite3'); const db = new Database('/app/data/app.db', { timeout: 5000 });
        db.exec(\`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${SEEDED})
          INSERT INTO users (name, email, email_key) SELECT 'Seed ' || i, email, email FROM (SELECT i, 'seed' || i || '@example.com' AS email FROM n)\`); db.close();`;
        await docker(['exec', sourceContainer, 'node', '-e', seed]);

        const backupFile = join(dir, 'app-backup.db');
        const drill = await backupDuringWrites([url], async () => {
          console.log(await docker(['exec', sourceContainer, 'node', 'dist/backup.js', '/app/data/backup.db']));
        });
        await docker(['cp', `${sourceContainer}:/app/data/backup.db`, backupFile]);
        await docker(['exec', sourceContainer, 'rm', '/app/data/backup.db']);

        const started = performance.now();
        await docker(['volume', 'create', restoredVolume]);
        // Written by the image's user (node), who owns /app/data; set -C: never over an existing app.db.
        await dockerFromFile(
          ['run', '--rm', '-i', '-v', `${restoredVolume}:/app/data`, image, 'sh', '-c', 'set -C && cat > /app/data/app.db'],
          backupFile,
        );
        const placed = await docker(['run', '--rm', '-v', `${restoredVolume}:/app/data`, image, 'ls', '/app/data']);
        expect(placed.split('\n')).toEqual(['app.db']);
        const restoredUrl = await runService(restoredContainer, restoredVolume);
        await expectRestored('SQLite (docker run)', drill, restoredUrl, performance.now() - started);
      }, 600_000);
    });

    describe('Swarm database stack (deploy/swarm/compose.database.yml on a single-node swarm): deploy/swarm/backup.sh and restore.sh', () => {
      const stacks = { source: `bksrc${stage.runId}`, restored: `bkdst${stage.runId}` };
      const secrets = { source: `bk-src-password-${stage.runId}`, restored: `bk-dst-password-${stage.runId}` };
      let leaveSwarm: (() => Promise<void>) | undefined;

      /** `docker stack deploy` of the file with this run's image, a free host port per replica, `replicas` of web. */
      const deploy = (which: keyof typeof stacks, user: string, replicas: number): Promise<string> =>
        docker(['stack', 'deploy', '--compose-file', join(repoRoot, 'deploy/swarm/compose.database.yml'), stacks[which]], {
          env: { TAG: stage.tag, DB_PASSWORD_SECRET: secrets[which], POSTGRES_USER: user, WEB_PORT: '0', WEB_REPLICAS: String(replicas) },
        });
      /** The published URLs of web's replicas once `count` run healthy and ready. */
      const webUrls = async (stack: string, count: number): Promise<string[]> => {
        await waitFor(
          `${count} healthy ${stack}_web tasks`,
          async () => (await running(`${stack}_web`)) === count || undefined,
          180_000,
          1_000,
        );
        const urls = await Promise.all((await tasksOf(`${stack}_web`)).map((container) => taskUrl(container, 5000)));
        await ready(urls);
        return urls;
      };

      beforeAll(async () => {
        leaveSwarm = await useSingleNodeSwarm();
        for (const secret of Object.values(secrets)) {
          const file = join(dir, secret);
          await writeFile(file, `${randomBytes(12).toString('hex')}\n`, { mode: 0o600 });
          await docker(['secret', 'create', secret, file]);
        }
      });
      afterAll(async () => {
        await Promise.all(Object.values(stacks).map((stack) => removeStack(stack).catch(() => undefined)));
        await dockerResult(['secret', 'rm', ...Object.values(secrets)]);
        await leaveSwarm?.();
      }, 180_000);

      it('swarm backup.sh during writes, restore.sh into a new stack: every user acknowledged before it began, as answered', async () => {
        let started = performance.now();
        await deploy('source', 'tester', 2);
        const urls = await webUrls(stacks.source, 2);
        console.log(`swarm PostgreSQL drill: source stack deployed, 2 web replicas ready in ${seconds(performance.now() - started)}`);
        await listAllUsers(urls[0] ?? '');
        const [db] = await tasksOf(`${stacks.source}_db`);
        await docker(['exec', db ?? '', 'psql', '-U', 'tester', '-d', 'flaskapp', '-tAc', seedSql(SEEDED)], { timeoutMs: 120_000 });

        const dump = join(dir, 'swarm-users.dump');
        const drill = await backupDuringWrites(urls, async () =>
          console.log(await runScript('deploy/swarm/backup.sh', [stacks.source, dump])),
        );

        started = performance.now();
        // PostgreSQL alone on a fresh volume, restored, then web deployed at its replicas.
        await deploy('restored', 'restorer', 0);
        console.log(await runScript('deploy/swarm/restore.sh', [stacks.restored, dump]));
        await deploy('restored', 'restorer', 2);
        const restoredUrls = await webUrls(stacks.restored, 2);
        await expectRestored('swarm PostgreSQL', drill, restoredUrls[0] ?? '', performance.now() - started);
      }, 600_000);
    });
  },
);
