import pg from 'pg';
import type { TestPostgres } from '@sample-services/testing/postgres';
import { getRoute, measureRoute, startMeasured, type Row, type RunSettings } from '../measure.js';
import { nodeServer, serviceServer, startServer, type ServerProcess, type ServerSpec } from '../server-process.js';
import { atLeast, atMost, cpuRatio, processTargets, throughputRatio, type ScenarioResult } from '../targets.js';
import { bareDatabase, listRoute } from './database.js';
import { bareRelay } from './proxy.js';
import { idiomaticAppSpec } from './simple.js';

/** The C backend offers no create: its 100 users are written straight into its table. */
async function seedTable(url: string, count: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(
      `INSERT INTO users (name, email) SELECT 'Seed User ' || i, 'seed-' || i || '@example.com' FROM generate_series(1, $1::int) AS i`,
      [count],
    );
  } finally {
    await client.end();
  }
}

/**
 * C: the backend on PostgreSQL against the bare driver baseline; then the frontend in front
 * of a backend on the other core, against bare node:http relaying through the same client.
 */
export async function runTwoTier(settings: RunSettings, postgres: () => Promise<TestPostgres | undefined>): Promise<ScenarioResult> {
  const server = await postgres();
  if (server === undefined) return { rows: [], targets: [] };
  const env = { DATABASE_URL: await server.createDatabase() };
  const started: ServerProcess[] = [];
  /**
   * The servers of a pair started together (startMeasured), subject first, the baseline second, timed
   * in turns with the idiomatic app (the start-up target), which then stops; its start-up third.
   */
  const startPair = async (subject: ServerSpec, baseline: ServerSpec): Promise<[ServerProcess, ServerProcess, number]> => {
    const [own, base, idiomatic] = await startMeasured([subject, baseline, idiomaticAppSpec(settings)], settings.startups);
    started.push(own, base, idiomatic);
    await idiomatic.stop();
    return [own, base, idiomatic.startupMs];
  };
  try {
    const [backend, bare, idiomaticForBackendMs] = await startPair(
      serviceServer('backend (PostgreSQL)', 'backend', env, settings.cpus.server),
      nodeServer('bare node:http + pg', bareDatabase, env, settings.cpus.server),
    );
    await seedTable(env.DATABASE_URL, 100);
    const backendRows: Row[] = [];
    for (const route of [listRoute, getRoute('/health')])
      backendRows.push(...(await measureRoute('C backend', route, [backend, bare], settings)));
    await Promise.all([backend.stop(), bare.stop()]);

    const upstream = await startServer(serviceServer('backend', 'backend', env, settings.cpus.other));
    started.push(upstream);
    const frontendEnv = { BACKEND_URL: upstream.baseUrl };
    const [frontend, relay, idiomaticForFrontendMs] = await startPair(
      serviceServer('frontend', 'frontend', frontendEnv, settings.cpus.server),
      nodeServer('bare node:http + undici', bareRelay, { ...frontendEnv, LOCAL_HEALTH: '1' }, settings.cpus.server),
    );
    const frontendRows: Row[] = [];
    for (const route of [listRoute, getRoute('/health')])
      frontendRows.push(...(await measureRoute('C frontend', route, [frontend, relay], settings)));

    return {
      rows: [...backendRows, ...frontendRows],
      targets: [
        atLeast('C backend list: service / bare driver', throughputRatio(backendRows, listRoute.name, backend.label, bare.label), 0.8),
        ...processTargets(backendRows, backend.label, [bare.label], { subjectMs: backend.startupMs, idiomaticMs: idiomaticForBackendMs }),
        // Issue 42: the forwarded list's CPU per request against the bare relay's, the median of the per-round ratios.
        atMost(
          `C frontend list: CPU µs per request / ${relay.label}'s`,
          cpuRatio(frontendRows, listRoute.name, frontend.label, relay.label),
          1.5,
        ),
        ...processTargets(frontendRows, frontend.label, [relay.label], {
          subjectMs: frontend.startupMs,
          idiomaticMs: idiomaticForFrontendMs,
        }),
      ],
    };
  } finally {
    await Promise.all(started.map((process) => process.stop()));
  }
}
