import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import Database from 'better-sqlite3';
import pg from 'pg';
import type { TestPostgres } from '@sample-services/testing/postgres';
import { createPostgresStore } from '@sample-services/users/postgres-store';
import { createSqliteStore } from '@sample-services/users/sqlite-store';
import type { Reading, ReadResult, ReadSpec } from '../clients/read-all.js';
import { median, type RunSettings } from '../measure.js';
import { repoRoot, serviceServer, startServer, type ServerProcess } from '../server-process.js';
import { atLeast, atMost, type ScenarioResult, type TargetCheck } from '../targets.js';

const run = promisify(execFile);
const reader = join(repoRoot, 'bench/dist/clients/read-all.js');

/** The list sizes measured when --sizes is not given. */
export const defaultSizes = [10_000, 100_000, 1_000_000];

/** Answers up to this size are also parsed whole by the reader (10^4 and 10^5 users); longer ones are counted only. */
const parseUpTo = 32 * 2 ** 20;

// created_at as the service writes it (postgres-store.ts), so the export's objects are the service's.
const pgColumns = `id, name, email, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS created_at`;
/** PostgreSQL's own export of the same rows as JSON: one row_to_json object a line, the same bytes as the service's array. */
const pgExport = `COPY (SELECT row_to_json(u) FROM (SELECT ${pgColumns} FROM users ORDER BY id) AS u) TO STDOUT`;
const sqliteExport = 'SELECT id, name, email, created_at FROM users ORDER BY id';

/** One reading of one contender in one round, with the CPU time its processes used meanwhile. */
export interface SizeRound {
  readings: Reading[];
  /** Seconds of CPU per process (same order as SizeRow.processes). */
  cpuSeconds: number[];
}

/** One line of the size table: a server (or an export) reading the whole list of `users` users. */
export interface SizeRow {
  users: number;
  /** `B PostgreSQL`, `B SQLite`, `C`, or an export (`PostgreSQL export`, `SQLite export`). */
  server: string;
  /** What runs: the processes, or the export command. */
  detail: string;
  /** The export this row's rate is compared with; undefined for the exports themselves. */
  export: string | undefined;
  /** Every reading a 2xx (exit 0 for an export) with exactly `users` objects, a JSON array (JSON lines for COPY). */
  complete: boolean;
  /** Why not, for the first reading that was not. */
  problem: string | undefined;
  statuses: number[];
  /** The fewest `{"id":` counted in a reading. */
  rows: number;
  bytes: number;
  /** Medians over every reading. */
  ttfbMs: number;
  totalMs: number;
  /** 10^6 bytes per second. */
  mbPerSecond: number;
  usPerRow: number;
  /** MB/s over the export's, median of the per-round ratios (each round's pair read back to back). */
  vsExport: number;
  /** The measured processes (server core first, e.g. frontend then backend); empty for an export. */
  processes: string[];
  /** CPU µs per row of each process, over all readings. */
  cpuUsPerRow: number[];
  /** VmHWM of each process after all its readings (a fresh process for each size), 2^20 bytes. */
  peakRssMb: number[];
  rounds: SizeRound[];
}

interface Contender {
  server: string;
  detail: string;
  export?: string;
  format: 'array' | 'lines';
  target: Pick<ReadSpec, 'url' | 'command'>;
  processes: ServerProcess[];
}

/** The PostgreSQL client of the cluster's own version (Debian's /usr/bin/psql is a Perl wrapper around it). */
function psqlPath(): string {
  const root = '/usr/lib/postgresql';
  const newest = existsSync(root) ? readdirSync(root).sort((a, b) => Number(b) - Number(a))[0] : undefined;
  const dir = process.env.PG_BIN ?? (newest === undefined ? undefined : join(root, newest, 'bin'));
  return dir !== undefined && existsSync(join(dir, 'psql')) ? join(dir, 'psql') : 'psql';
}

const pinned = (cpus: string | undefined, command: string[]): string[] =>
  cpus === undefined ? command : ['taskset', '-c', cpus, ...command];

async function read(spec: ReadSpec, cpus: string | undefined): Promise<Reading[]> {
  const [command = '', ...args] = pinned(cpus, [process.execPath, reader, JSON.stringify(spec)]);
  const { stdout } = await run(command, args, { maxBuffer: 16 * 2 ** 20 });
  return (JSON.parse(stdout) as ReadResult).readings;
}

/** Adds users 'User <n>' up to `users`, in one statement; VACUUM ANALYZE so no reader pays for hint bits. */
async function growPostgres(url: string, users: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ count: number }>('SELECT count(*)::int AS count FROM users');
    const have = rows[0]?.count ?? 0;
    await client.query(
      `INSERT INTO users (name, email) SELECT 'User ' || g, 'user' || g || '@example.com' FROM generate_series($1::int, $2::int) AS g`,
      [have + 1, users],
    );
    await client.query('VACUUM ANALYZE users');
  } finally {
    await client.end();
  }
}

/** The same on the SQLite file, one transaction through a recursive CTE; the WAL checkpointed into the file. */
function growSqlite(file: string, users: number): void {
  const db = new Database(file);
  try {
    db.pragma('busy_timeout = 5000');
    const have = db.prepare('SELECT count(*) FROM users').pluck().get() as number;
    const insert = db.prepare(
      // The key the service would write (email_key, migration 0003 requires it): these e-mails are their own.
      `WITH RECURSIVE g(i) AS (SELECT ? UNION ALL SELECT i + 1 FROM g WHERE i < ?)
       INSERT INTO users (name, email, email_key) SELECT 'User ' || i, email, email FROM (SELECT i, 'user' || i || '@example.com' AS email FROM g)`,
    );
    db.transaction(() => insert.run(have + 1, users))();
    db.exec('ANALYZE');
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}

/** Why a reading is not the whole list, or undefined when it is. */
function problemOf(reading: Reading, users: number, contender: Contender): string | undefined {
  const expected = contender.target.url !== undefined ? 200 : 0;
  if (reading.status !== expected)
    return `status ${reading.status}${reading.error === undefined ? '' : `: ${reading.error.slice(0, 200)}`}`;
  if (reading.error !== undefined) return reading.error;
  if (reading.rows !== users) return `${reading.rows} of ${users} rows`;
  const [head, tail] = [reading.head.trimStart(), reading.tail.trimEnd()];
  if (contender.format === 'array') {
    if (!head.startsWith('[{"id":') || !tail.endsWith('}]')) return 'not a JSON array';
    if (reading.json !== 'not checked' && reading.json !== users) return `JSON.parse: ${reading.json}`;
  } else if (!head.startsWith('{"id":') || !tail.endsWith('}')) return 'not JSON lines';
  return undefined;
}

/**
 * Reads the whole list from every contender, round after round (order reversed every other
 * round, as measureRoute does); `repeat` readings per round. Then each process's peak RSS.
 */
async function measureSize(users: number, contenders: Contender[], settings: RunSettings): Promise<SizeRow[]> {
  // 10^4 users take a few milliseconds: ten readings a round, so the median is not one sample's noise.
  const repeat = Math.max(1, Math.round(100_000 / users));
  const spec = (contender: Contender, times: number): ReadSpec => ({ ...contender.target, repeat: times, parseUpTo });
  const reading = settings.cpus.other;
  if (settings.warmupSeconds > 0) for (const contender of contenders) await read(spec(contender, 1), reading);
  const rounds = contenders.map(() => [] as SizeRound[]);
  for (let round = 0; round < settings.rounds; round++) {
    const order = contenders.map((_, i) => i);
    if (round % 2 === 1) order.reverse();
    for (const i of order) {
      const contender = contenders[i] as Contender;
      const before = contender.processes.map((p) => p.cpuSeconds());
      const readings = await read(spec(contender, repeat), reading);
      rounds[i]?.push({ readings, cpuSeconds: contender.processes.map((p, k) => p.cpuSeconds() - (before[k] ?? 0)) });
    }
  }
  const mbPerSecond = (list: Reading[]): number => median(list.map((r) => r.bytes / r.totalMs / 1000));
  return contenders.map((contender, i) => {
    const own = rounds[i] ?? [];
    const readings = own.flatMap((r) => r.readings);
    const problems = readings.map((r) => problemOf(r, users, contender)).filter((p) => p !== undefined);
    const exportRounds = rounds[contenders.findIndex((c) => c.server === contender.export)];
    const complete = problems.length === 0;
    // Rates of answers that are not the whole list (an error, a cut stream) mean nothing.
    const whenComplete = (value: () => number): number => (complete ? value() : Number.NaN);
    return {
      users,
      server: contender.server,
      detail: contender.detail,
      export: contender.export,
      complete,
      problem: problems[0],
      statuses: [...new Set(readings.map((r) => r.status))],
      rows: Math.min(...readings.map((r) => r.rows)),
      bytes: Math.max(...readings.map((r) => r.bytes)),
      ttfbMs: median(readings.map((r) => r.ttfbMs)),
      totalMs: median(readings.map((r) => r.totalMs)),
      mbPerSecond: whenComplete(() => mbPerSecond(readings)),
      usPerRow: whenComplete(() => median(readings.map((r) => (1000 * r.totalMs) / users))),
      vsExport: whenComplete(() =>
        exportRounds === undefined
          ? Number.NaN
          : median(own.map((r, round) => mbPerSecond(r.readings) / mbPerSecond(exportRounds[round]?.readings ?? []))),
      ),
      processes: contender.processes.map((p) => p.label),
      cpuUsPerRow: contender.processes.map(
        (_, k) => (1e6 * own.reduce((sum, r) => sum + (r.cpuSeconds[k] ?? 0), 0)) / (readings.length * users),
      ),
      peakRssMb: contender.processes.map((p) => p.peakRssBytes() / 2 ** 20),
      rounds: own,
    };
  });
}

/**
 * Size: the whole user list at 10^4, 10^5 and 10^6 users from B on PostgreSQL, B on SQLite and
 * C (the frontend in front of a backend on PostgreSQL), beside the databases' own exports of the
 * same rows (psql COPY of row_to_json, sqlite3 -json). Each size gets fresh service processes, so
 * their VmHWM is the peak of serving that size; the tables grow between sizes.
 */
export async function runSize(settings: RunSettings, postgres: () => Promise<TestPostgres | undefined>): Promise<ScenarioResult> {
  const sizes = [...settings.sizes].sort((a, b) => a - b);
  const server = await postgres();
  const pgUrl = server === undefined ? undefined : await server.createDatabase();
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-size-'));
  const sqliteFile = join(dataDir, 'app.db'); // the store's file name (SQLITE_FILE)
  const sizeRows: SizeRow[] = [];
  try {
    // The tables exactly as the services create them.
    if (pgUrl !== undefined) {
      const store = createPostgresStore(pgUrl);
      await store.init();
      await store.close();
    }
    await createSqliteStore(dataDir).close();

    for (const users of sizes) {
      process.stderr.write(`bench: size ${users} users: seeding...\n`);
      if (pgUrl !== undefined) await growPostgres(pgUrl, users);
      growSqlite(sqliteFile, users);
      const started: ServerProcess[] = [];
      const start = async (...args: Parameters<typeof serviceServer>): Promise<ServerProcess> => {
        const spawned = await startServer(serviceServer(...args));
        started.push(spawned);
        return spawned;
      };
      try {
        const contenders: Contender[] = [];
        if (pgUrl !== undefined) {
          const env = { DATABASE_URL: pgUrl };
          const database = await start('database (PostgreSQL)', 'database', env, settings.cpus.server);
          const backend = await start('backend (PostgreSQL)', 'backend', env, settings.cpus.other);
          const frontend = await start('frontend', 'frontend', { BACKEND_URL: backend.baseUrl }, settings.cpus.server);
          const psql = [psqlPath(), '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d', pgUrl, '-c', pgExport];
          contenders.push(
            {
              server: 'B PostgreSQL',
              detail: database.label,
              export: 'PostgreSQL export',
              format: 'array',
              target: { url: `${database.baseUrl}/api/users` },
              processes: [database],
            },
            {
              server: 'PostgreSQL export',
              detail: 'psql COPY (row_to_json) TO STDOUT',
              format: 'lines',
              target: { command: pinned(settings.cpus.server, psql) },
              processes: [],
            },
            {
              server: 'C',
              detail: 'frontend → backend (PostgreSQL)',
              export: 'PostgreSQL export',
              format: 'array',
              target: { url: `${frontend.baseUrl}/api/users` },
              processes: [frontend, backend],
            },
          );
        }
        const sqliteService = await start('database (SQLite)', 'database', { DATA_DIR: dataDir }, settings.cpus.server);
        contenders.push(
          {
            server: 'B SQLite',
            detail: sqliteService.label,
            export: 'SQLite export',
            format: 'array',
            target: { url: `${sqliteService.baseUrl}/api/users` },
            processes: [sqliteService],
          },
          {
            server: 'SQLite export',
            detail: 'sqlite3 -json',
            format: 'array',
            target: { command: pinned(settings.cpus.server, ['sqlite3', '-json', sqliteFile, sqliteExport]) },
            processes: [],
          },
        );
        // In a round each service is read next to its export (C's is PostgreSQL's, in the middle).
        process.stderr.write(`bench: size ${users} users: reading...\n`);
        sizeRows.push(...(await measureSize(users, contenders, settings)));
      } finally {
        await Promise.all(started.map((p) => p.stop()));
      }
    }
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { rows: [], targets: sizeTargets(sizeRows, sizes), sizeRows };
}

const count = (n: number): string => n.toLocaleString('en-US');

/** At the largest size: every row in a 200, peak RSS, rate against the export; per-row time from the smallest to the largest. */
function sizeTargets(rows: SizeRow[], sizes: number[]): TargetCheck[] {
  const [smallest, largest] = [sizes[0] ?? 0, sizes[sizes.length - 1] ?? 0];
  const targets: TargetCheck[] = [];
  for (const server of [...new Set(rows.filter((r) => r.export !== undefined).map((r) => r.server))]) {
    const at = (users: number): SizeRow | undefined => rows.find((r) => r.server === server && r.users === users);
    const [small, large] = [at(smallest), at(largest)];
    if (large === undefined) continue;
    targets.push(atLeast(`Size ${server}, ${count(largest)} users: rows in a complete 200`, large.complete ? large.rows : 0, largest));
    large.processes.forEach((label, k) => {
      const peak = Math.max(...rows.filter((r) => r.server === server).map((r) => r.peakRssMb[k] ?? Number.NaN));
      targets.push(atMost(`Size ${server}, ${label}: peak RSS MB, up to ${count(largest)} users`, peak, 150));
    });
    targets.push(atLeast(`Size ${server}, ${count(largest)} users: MB/s / ${large.export}'s`, large.vsExport, 0.5));
    if (small !== undefined && small !== large) {
      targets.push(
        atMost(`Size ${server}: time per row at ${count(largest)} / at ${count(smallest)} users`, large.usPerRow / small.usPerRow, 1.5),
      );
    }
  }
  return targets;
}
