import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { afterAll, describe, expect, it } from 'vitest';
import { DEVELOPMENT_PASSWORD, readStoreConfig, usesDevelopmentPassword } from '../src/open-store.js';
import { DEVELOPMENT_PASSWORD_WARNING, startUserStore } from '../src/start-store.js';

const dir = mkdtempSync(join(tmpdir(), 'start-store-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A password file as the compose stacks mount it, e.g. deploy/compose/dev-db-password. */
const passwordFile = (name: string, text: string): string => {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
};
// Nothing listens on port 1: the store starts unreachable, and the test needs no PostgreSQL.
const unreachable = 'postgresql://user@127.0.0.1:1/flaskapp';

/** The store started as a service starts it, and the log lines it wrote meanwhile. */
async function start(env: Record<string, string>): Promise<{ level: number; msg: string }[]> {
  const lines: { level: number; msg: string }[] = [];
  const logger = pino({ level: 'info' }, { write: (line: string) => lines.push(JSON.parse(line) as { level: number; msg: string }) });
  const store = await startUserStore(readStoreConfig(env), logger);
  await store.close();
  return lines;
}
const warnings = (lines: { level: number; msg: string }[]): string[] => lines.filter((l) => l.level === 40).map((l) => l.msg);

describe('startUserStore: the development password', () => {
  it('warns once at start when PostgreSQL is reached with the development password, from a file or the URL', async () => {
    const fromFile = await start({ DATABASE_URL: unreachable, DATABASE_PASSWORD_FILE: passwordFile('dev', `${DEVELOPMENT_PASSWORD}\n`) });
    expect(warnings(fromFile).filter((m) => m === DEVELOPMENT_PASSWORD_WARNING)).toHaveLength(1);
    expect(fromFile[0]?.msg, 'the first line').toBe(DEVELOPMENT_PASSWORD_WARNING);
    const inUrl = await start({ DATABASE_URL: unreachable.replace('user@', `user:${DEVELOPMENT_PASSWORD}@`) });
    expect(warnings(inUrl)).toContain(DEVELOPMENT_PASSWORD_WARNING);
  });

  it('says nothing of it with a password of its own, or with SQLite', async () => {
    const own = await start({ DATABASE_URL: unreachable, DATABASE_PASSWORD_FILE: passwordFile('own', `${DEVELOPMENT_PASSWORD}2\n`) });
    expect(own.map((l) => l.msg)).not.toContain(DEVELOPMENT_PASSWORD_WARNING);
    const sqlite = await start({ DATA_DIR: join(dir, 'data') });
    expect(sqlite.map((l) => l.msg)).not.toContain(DEVELOPMENT_PASSWORD_WARNING);
  });

  it('compares the decoded password: an encoded development password is one, a bad encoding is not', () => {
    const config = (url: string) => ({ databaseUrl: new URL(url), dataDir: dir, poolSize: 10 });
    expect(usesDevelopmentPassword(config('postgresql://u:%70assword@db/x'))).toBe(true);
    expect(usesDevelopmentPassword(config('postgresql://u:%zz@db/x'))).toBe(false);
    expect(usesDevelopmentPassword(config('postgresql://u@db/x'))).toBe(false);
    expect(usesDevelopmentPassword({ databaseUrl: undefined, dataDir: dir, poolSize: 10 })).toBe(false);
  });
});
