import { services, stacks, startedLine } from '@sample-services/manifest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { backendContract } from '@sample-services/testing/contract/backend';
import { commonContract } from '@sample-services/testing/contract/common';
import { frontendContract } from '@sample-services/testing/contract/frontend';
import { docker, dockerResult, inspectJson, waitForHttp } from './support/docker.js';
import { expectHardenedService, networksOf } from './support/hardening.js';
import { healthyWithinMs, leftovers, openStack, startAndHealthy, type Stack } from './support/stack.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

describe.skipIf(stage.skipReason !== undefined)('two-tier stack (deploy/compose/compose.two-tier.yml)', () => {
  let stack: Stack;
  const urls = { frontend: '', backend: '' };
  beforeAll(async () => {
    stack = await openStack('two-tier', stage);
  });
  afterAll(async () => {
    await stack.remove();
  });

  it('up -d --wait starts the backend once the database is healthy, the frontend once the backend is', async () => {
    await stack.upAndWait();
    [urls.frontend, urls.backend] = await Promise.all([stack.url('frontend'), stack.url('backend')]);
    await waitForHttp(urls.frontend);
    const [db, backend, frontend] = await Promise.all(
      ['db', 'backend', 'frontend'].map(async (s) => startAndHealthy(await stack.container(s))),
    );
    expect(backend?.started).toBeGreaterThanOrEqual(db?.firstHealthy ?? Infinity);
    expect(frontend?.started).toBeGreaterThanOrEqual(backend?.firstHealthy ?? Infinity);
    for (const service of [backend, frontend])
      expect((service?.firstHealthy ?? Infinity) - (service?.started ?? 0)).toBeLessThan(healthyWithinMs);
  });

  describe('the backend on its published port', () => {
    backendContract(() => urls.backend);
    commonContract(() => urls.backend);
  });
  describe('the frontend on its published port, reaching the backend by its service name', () => {
    frontendContract(
      () => urls.frontend,
      () => urls.backend,
    );
    commonContract(() => urls.frontend);
  });

  it('runs frontend and backend hardened; the frontend cannot even resolve PostgreSQL', async () => {
    const [frontend, backend, db] = await Promise.all(['frontend', 'backend', 'db'].map((s) => stack.container(s)));
    for (const container of [frontend, backend]) await expectHardenedService(container ?? '');
    expect(await networksOf(db ?? '', stack.project)).toEqual(['db-network']);
    expect(await networksOf(frontend ?? '', stack.project)).toEqual(['app-network']);
    const lookup = (container: string) =>
      dockerResult(['exec', container, 'node', '-e', "require('node:dns').lookup('db', (error) => process.exit(error ? 3 : 0))"]);
    expect((await lookup(backend ?? '')).code).toBe(0);
    expect((await lookup(frontend ?? '')).code).toBe(3);
  });

  it('takes the password from a secret file: in no inspect output or log', async () => {
    for (const service of ['frontend', 'backend', 'db']) {
      expect(await docker(['inspect', await stack.container(service)]), service).not.toContain(stack.password);
    }
    expect(await stack.run(['logs', '--no-color'])).not.toContain(stack.password);
  });

  it("publishes no port of PostgreSQL, and bounds every container's log", async () => {
    const db = await stack.container('db');
    expect(await inspectJson<Record<string, unknown> | null>(db, '{{json .HostConfig.PortBindings}}')).toEqual({});
    for (const service of ['frontend', 'backend', 'db']) {
      const log = await inspectJson<{ Type: string; Config: Record<string, string> }>(
        await stack.container(service),
        '{{json .HostConfig.LogConfig}}',
      );
      expect(log.Type, service).toMatch(/^(json-file|local)$/);
      if (log.Type === 'json-file') expect(log.Config['max-size'], `${service}: max-size`).toMatch(/^\d+[kmg]$/);
    }
  });

  it('serves the users page at / from the image, with its strict headers', async () => {
    const page = await fetch(`${urls.frontend}/`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    // Every script the page names is served by the frontend itself.
    const scripts = [...(await page.text()).matchAll(/<script[^>]* src="([^"]+)"/g)].map((m) => m[1] ?? '');
    expect(scripts.length).toBeGreaterThan(0);
    for (const src of scripts) expect((await fetch(new URL(src, urls.frontend))).status, src).toBe(200);
  });

  it('logs of each service show its start-up line', async () => {
    for (const { as, service } of stacks['two-tier'].members) {
      expect(await stack.run(['logs', '--no-color', as])).toContain(`"msg":"${startedLine(service, services[service].port)}"`);
    }
  });

  it('down -v removes the containers, the network and both volumes', async () => {
    await stack.run(['down', '-v']);
    expect(await leftovers(stack.project)).toEqual([]);
  });
});
