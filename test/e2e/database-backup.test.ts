import { execFile } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { addUsersToSqlite } from '@sample-services/testing/many-users';
import { repoRoot } from '@sample-services/testing/repo-root';
import { startService } from '@sample-services/testing/service-process';
import { checkRestore, listAllUsers, restoreSummary, startWriteLoad } from '@sample-services/testing/write-load';

const dataDir = mkdtempSync(join(tmpdir(), 'svc-b-backup-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

/** `node services/database/dist/backup.js <args>` as its own process: its exit code and output. */
function backup(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['services/database/dist/backup.js', ...args],
      { cwd: repoRoot, env: { PATH: process.env.PATH, ...env } },
      (error, stdout, stderr) => resolve({ code: error === null ? 0 : Number(error.code), stdout, stderr }),
    );
  });
}

describe('variant B on SQLite: backup.js while the service writes, restored into an empty DATA_DIR', () => {
  it('restores every user acknowledged before the backup began, each as its 201 said, none sent after it ended', async () => {
    const source = join(dataDir, 'source');
    const target = join(dataDir, 'users-backup.db');
    // Enough pages (about 8 MB) that a copy in small steps would see the service's commits between them.
    await addUsersToSqlite(source, 100_000);
    const service = await startService('database', { DATA_DIR: source });
    const existing = await listAllUsers(service.baseUrl);
    const load = startWriteLoad([service.baseUrl]);
    let began = 0;
    let ended = 0;
    try {
      await load.acknowledgedSince(0, 300);
      began = Date.now();
      // Another process on the live file, as `docker exec` runs it beside the service.
      const result = await backup([target], { DATA_DIR: source });
      ended = Date.now();
      expect(result).toMatchObject({ code: 0, stderr: '' });
      expect(result.stdout).toMatch(
        new RegExp(`^backup: \\d+ users from ${join(source, 'app.db')} to ${target} \\([\\d.]+ MB\\) in [\\d.]+ s\\n$`),
      );
      await load.acknowledgedSince(ended, 100);
    } finally {
      await load.stop();
      await service.stop();
    }
    expect(load.failures).toEqual({});
    // One file on its own: no -wal or -shm to carry beside it.
    expect(readdirSync(dataDir).filter((name) => name.startsWith('users-backup'))).toEqual(['users-backup.db']);

    const restoredDir = join(dataDir, 'restored');
    mkdirSync(restoredDir);
    copyFileSync(target, join(restoredDir, 'app.db'));
    const started = performance.now();
    const restored = await startService('database', { DATA_DIR: restoredDir });
    try {
      const check = checkRestore(existing, load.acknowledged, await listAllUsers(restored.baseUrl), { began, ended });
      console.log(restoreSummary('SQLite backup.js (e2e)', check, ended - began, performance.now() - started));
      expect(existing).toHaveLength(100_000);
      expect(check.before).toBeGreaterThanOrEqual(300);
      expect(check.after).toBeGreaterThanOrEqual(100);
      expect({ missing: check.missing, unknown: check.unknown, late: check.late }).toEqual({ missing: [], unknown: [], late: [] });
    } finally {
      await restored.stop();
    }
  });

  it('says what is wrong in one line: no target, an existing file, DATABASE_URL set, no users file', async () => {
    const source = join(dataDir, 'source');
    const existing = join(dataDir, 'existing.db');
    writeFileSync(existing, 'keep me');
    const cases: [string[], NodeJS.ProcessEnv, number, string][] = [
      [[], { DATA_DIR: source }, 2, 'backup: usage: node dist/backup.js TARGET (a new file)\n'],
      [['a.db', 'b.db'], { DATA_DIR: source }, 2, 'backup: usage: node dist/backup.js TARGET (a new file)\n'],
      [[existing], { DATA_DIR: source }, 2, `backup: ${existing} already exists: name a new file\n`],
      [
        [join(dataDir, 'pg.db')],
        { DATA_DIR: source, DATABASE_URL: 'postgresql://u@db/x' },
        2,
        'backup: DATABASE_URL is set: the users are in PostgreSQL, back them up with pg_dump\n',
      ],
      [
        [join(dataDir, 'none.db')],
        { DATA_DIR: join(dataDir, 'empty') },
        1,
        `backup: ${join(dataDir, 'empty', 'app.db')} does not exist: DATA_DIR must be the service's\n`,
      ],
    ];
    for (const [args, env, code, stderr] of cases) expect(await backup(args, env), args.join(' ')).toEqual({ code, stdout: '', stderr });
    expect(existsSync(join(dataDir, 'pg.db')) || existsSync(join(dataDir, 'none.db'))).toBe(false);
  });
});
