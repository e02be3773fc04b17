/**
 * Each service's served OpenAPI document against the service itself, by Schemathesis: requests
 * generated from the document (valid ones and invalid ones) and every answer checked against it.
 * A finding means the document and the handlers disagree. The proxy serves no document of its own
 * (it forwards /openapi.json to its upstream).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createSqliteStore } from '@sample-services/users/sqlite-store';
import { afterAll, describe, expect, it } from 'vitest';
import { findSchemathesis, runSchemathesis } from '@sample-services/testing/schemathesis';
import { startService, type ServiceProcess } from '@sample-services/testing/service-process';

// Optional on a workstation, never in CI: there its absence is a failure.
const schemathesis = findSchemathesis();
if ('missing' in schemathesis && process.env.CI !== 'true') console.warn(`SKIPPED: ${schemathesis.missing}.`);
const suite = 'command' in schemathesis || process.env.CI === 'true' ? describe : describe.skip;

/** Long enough for 1,000 examples of each operation on a busy 2-core machine (about 40 s when quiet). */
const RUN_TIMEOUT_MS = 600_000;

suite('Schemathesis finds nothing in the document each service serves', () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'svc-schemathesis-'));
  const started: ServiceProcess[] = [];
  afterAll(async () => {
    for (const service of started.reverse()) await service.stop();
    rmSync(dataDir, { recursive: true, force: true });
  });
  const start = async (...args: Parameters<typeof startService>): Promise<ServiceProcess> => {
    const service = await startService(...args);
    started.push(service);
    return service;
  };

  const expectNoFinding = async (service: ServiceProcess): Promise<void> => {
    if ('missing' in schemathesis) throw new Error(`${schemathesis.missing}: it is required under CI=true`);
    const { code, output } = await runSchemathesis(schemathesis.command, service.baseUrl);
    // The report's failures section says what disagreed, with a curl line that reproduces each.
    const failures = output.indexOf('FAILURES');
    expect(code, output.slice(failures === -1 ? -4_000 : failures)).toBe(0);
  };

  it('simple', { timeout: RUN_TIMEOUT_MS }, async () => {
    await expectNoFinding(await start('simple'));
  });

  it('database, on SQLite', { timeout: RUN_TIMEOUT_MS }, async () => {
    await expectNoFinding(await start('database', { DATA_DIR: join(dataDir, 'database') }));
  });

  describe('backend and frontend, with users in the list', () => {
    let backend: ServiceProcess | undefined;
    const startBackend = async (): Promise<ServiceProcess> => {
      if (backend !== undefined) return backend;
      const store = createSqliteStore(join(dataDir, 'backend'));
      await store.create({ name: 'John Doe', email: 'john@example.com' });
      await store.create({ name: 'Jane Smith', email: 'jane@example.com' });
      await store.close();
      return (backend = await start('backend', { DATA_DIR: join(dataDir, 'backend') }));
    };

    it('backend', { timeout: RUN_TIMEOUT_MS }, async () => {
      await expectNoFinding(await startBackend());
    });

    it('frontend', { timeout: RUN_TIMEOUT_MS }, async () => {
      await expectNoFinding(await start('frontend', { BACKEND_URL: (await startBackend()).baseUrl }));
    });
  });
});
