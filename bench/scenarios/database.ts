import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestPostgres } from '@sample-services/testing/postgres';
import { getRoute, measureRoute, startMeasured, type Route, type Row, type RunSettings } from '../measure.js';
import { nodeServer, serviceServer, type ServerProcess } from '../server-process.js';
import { atLeast, processTargets, roundRatio, throughputRatio, type ScenarioResult, type TargetCheck } from '../targets.js';
import { idiomaticAppSpec } from './simple.js';

export const bareDatabase = 'bench/dist/baselines/bare-database.js';
export const listRoute: Route = { ...getRoute('/api/users'), name: 'GET /api/users (100 rows)' };
// Every request creates a distinct user: the load generator replaces [<id>] per request.
const createRoute: Route = {
  name: 'POST /api/users',
  path: '/api/users',
  method: 'POST',
  body: '{"name":"Bench [<id>]","email":"bench-[<id>]@example.com"}',
};

/** Fills an empty store with `count` users through the service's own POST /api/users. */
export async function seedUsers(server: ServerProcess, count: number): Promise<void> {
  for (let i = 1; i <= count; i++) {
    const response = await fetch(`${server.baseUrl}/api/users`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: `Seed User ${i}`, email: `seed-${i}@example.com` }),
    });
    if (response.status !== 201) throw new Error(`seeding ${server.label} failed: ${response.status} ${await response.text()}`);
  }
}

/** The body of a GET, as bytes. */
async function bodyOf(url: string): Promise<Buffer> {
  const response = await fetch(url);
  if (response.status !== 200) throw new Error(`GET ${url}: ${response.status}`);
  return Buffer.from(await response.arrayBuffer());
}

/** A target of a store's list or create, as a share of the bare driver's req/s; `name` marks a second one on the same figure. */
interface RatioTarget {
  limit: number;
  name?: string;
}

/**
 * B on one store: the service and the bare driver baseline on the same database, list before
 * create. The list and create are held to `listTargets` and `createTargets` times the baseline's
 * throughput, the list on the same bytes: the two bodies are compared once, byte for byte, before
 * timing. `alsoCreating`: more bare servers measured on the create route only, in the same rounds, and
 * baselines of the service's RSS. `otherSettings`: the service again with other settings, on the list
 * and creates. `rssWhyMissed`: what the store's design adds to the service's memory, where that is known.
 * Every server is timed starting in turns with the idiomatic app (the start-up target), which then stops.
 */
async function runStore(
  scenario: string,
  store: string,
  driver: string,
  env: Record<string, string>,
  settings: RunSettings,
  listTargets: RatioTarget[],
  createTargets: RatioTarget[],
  alsoCreating: { label: string; env: Record<string, string> }[] = [],
  otherSettings: { label: string; env: Record<string, string> }[] = [],
  rssWhyMissed?: string,
) {
  const specs = [
    serviceServer(`database (${store})`, 'database', env, settings.cpus.server),
    nodeServer(`bare node:http + ${driver}`, bareDatabase, env, settings.cpus.server),
    ...alsoCreating.map((extra) => nodeServer(extra.label, bareDatabase, { ...env, ...extra.env }, settings.cpus.server)),
    ...otherSettings.map((other) => serviceServer(other.label, 'database', { ...env, ...other.env }, settings.cpus.server)),
    idiomaticAppSpec(settings),
  ];
  const started = await startMeasured(specs, settings.startups);
  const [subject, baseline] = started;
  if (subject === undefined || baseline === undefined) throw new Error(`${scenario}: the service or its baseline was not started`);
  const creating = started.slice(2, 2 + alsoCreating.length);
  const variants = started.slice(2 + alsoCreating.length, -1);
  const idiomatic = started.at(-1) as ServerProcess;
  try {
    await idiomatic.stop();
    await seedUsers(subject, 100);
    const [own, bare] = await Promise.all([subject, baseline].map((server) => bodyOf(server.baseUrl + listRoute.path)));
    const sameBody = own !== undefined && bare !== undefined && own.equals(bare);
    if (!sameBody) process.stderr.write(`bench: ${scenario} list: the service's body differs from the baseline's\n`);
    const rows: Row[] = [];
    for (const route of [listRoute, createRoute, getRoute('/health')]) {
      // The baseline last: each row's ratio is to it.
      const contenders =
        route === createRoute
          ? [subject, ...variants, ...creating, baseline]
          : route === listRoute
            ? [subject, ...variants, baseline]
            : [subject, baseline];
      rows.push(...(await measureRoute(scenario, route, contenders, settings)));
    }
    const ratio = (route: Route): number => throughputRatio(rows, route.name, subject.label, baseline.label);
    const targets = [
      atLeast(`${scenario} list: same body as the bare driver's, byte for byte (1 = yes)`, sameBody ? 1 : 0, 1),
      ...listTargets.map((t) => atLeast(`${scenario} list: service / bare driver${t.name ?? ''}`, ratio(listRoute), t.limit)),
      ...createTargets.map((t) => atLeast(`${scenario} create: service / bare driver${t.name ?? ''}`, ratio(createRoute), t.limit)),
      ...processTargets(
        rows,
        subject.label,
        [baseline, ...creating].map((server) => server.label),
        { subjectMs: subject.startupMs, idiomaticMs: idiomatic.startupMs },
        rssWhyMissed,
      ),
    ];
    return { rows, targets, subject };
  } finally {
    await Promise.all(started.map((server) => server.stop()));
  }
}

// What the SQLite store's group commit adds to its memory, beside the bare driver on the main thread.
const sqliteRssWhyMissed =
  'the store writes through a worker_thread (group commit, its syncs off the event loop), which is a second V8 isolate with its own heap and its own SQLite connection';

/** B: variant B on PostgreSQL and on the SQLite file, each against the bare driver. */
export async function runDatabase(settings: RunSettings, postgres: () => Promise<TestPostgres | undefined>): Promise<ScenarioResult> {
  const rows: Row[] = [];
  const targets: TargetCheck[] = [];
  const server = await postgres();
  if (server !== undefined) {
    // The database writes the JSON (row_to_json) where the baseline parses rows and runs JSON.stringify: 1.5x.
    // Creates: one statement and one commit per batch, where the baseline sends one INSERT per request: 1.5x.
    // Pool sizes beside the default (DB_POOL_SIZE), for what it should be: measured, not assumed.
    const poolSizes = [2, 5, 20].map((size) => ({
      label: `database (PostgreSQL), DB_POOL_SIZE=${size}`,
      env: { DB_POOL_SIZE: String(size) },
    }));
    const result = await runStore(
      'B PostgreSQL',
      'PostgreSQL',
      'pg',
      { DATABASE_URL: await server.createDatabase() },
      settings,
      // Issue 42: at least the bare driver's on both stores; the earlier 1.5 stays, stricter on the same figures.
      [{ limit: 1 }, { limit: 1.5, name: ', earlier target' }],
      [{ limit: 1 }, { limit: 1.5, name: ', earlier target' }],
      [],
      poolSizes,
    );
    rows.push(...result.rows);
    targets.push(...result.targets);
  }
  const dataDir = mkdtempSync(join(tmpdir(), 'bench-sqlite-'));
  try {
    // At least the bare driver's speed. This replaces issue 5's "SQLite's list at least PostgreSQL's",
    // which no longer compares the same work: PostgreSQL's list shares one query among the requests that
    // arrive while it runs (coalescing), SQLite answers each request with its own read. The two are still
    // printed side by side in the table.
    // Both sync each commit (synchronous=FULL); the bare driver without (NORMAL, the service's setting
    // before it promised durability at the 201) shows what the syncs cost.
    const unsynced = 'bare node:http + better-sqlite3, synchronous=NORMAL';
    const result = await runStore(
      'B SQLite',
      'SQLite',
      'better-sqlite3',
      { DATA_DIR: dataDir },
      settings,
      // Issue 42: at least the bare driver's on both stores (the create's replaces the earlier 0.8).
      [{ limit: 1 }],
      [{ limit: 1 }],
      [{ label: unsynced, env: { SQLITE_SYNCHRONOUS: 'NORMAL' } }],
      [],
      sqliteRssWhyMissed,
    );
    rows.push(...result.rows);
    targets.push(...result.targets);
    // Group commit shares one sync among the creates of a batch, each 201 sent once its batch is synced
    // (synchronous=FULL, packages/users): against the store with no sync at all. Issue 42 asks 0.5; the
    // earlier 0.6 stays, stricter on the same figure.
    const durable = roundRatio(rows, createRoute.name, result.subject.label, unsynced);
    targets.push(
      atLeast(`B SQLite durable create: service / ${unsynced}`, durable, 0.5),
      atLeast(`B SQLite durable create: service / ${unsynced}, earlier target`, durable, 0.6),
    );
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
  return { rows, targets };
}
