import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { services, startedLine } from '@sample-services/manifest';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { commonContract } from '@sample-services/testing/contract/common';
import { simpleContract } from '@sample-services/testing/contract/simple';
import { docker, followLogsUntil, inspectJson, publishedUrl, timedStop, waitFor, waitForHttp, waitHealthy } from './support/docker.js';
import { imageOf } from './support/images.js';
import { healthyWithinMs, startAndHealthy } from './support/stack.js';

const stage = inject('containerStage');
if (stage.skipReason !== undefined) console.warn(stage.skipReason);

const listed = async (all: boolean, name: string): Promise<boolean> =>
  (await docker(['ps', ...(all ? ['--all'] : []), '--format', '{{.Names}}', '--filter', `name=^${name}$`])) === name;

describe.skipIf(stage.skipReason !== undefined)('container lifecycle of the variant A image', () => {
  const image = imageOf('simple', stage.tag);
  const { port } = services.simple;
  const name = (what: string): string => `sample-${stage.runId}-${what}`;
  const [web, created, volume, network] = [name('web'), name('created'), name('logs'), name('net')];
  let dir: string;
  let baseUrl = '';

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'container-lifecycle-'));
  });
  afterAll(async () => {
    await docker(['rm', '--force', web, created]).catch(() => undefined);
    await docker(['volume', 'rm', volume]).catch(() => undefined);
    await docker(['network', 'rm', network]).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  });

  it('create --name makes a container that is listed only by ps -a until start; stop; rm', async () => {
    await docker(['create', '--name', created, image]);
    expect(await docker(['inspect', '--format', '{{.State.Status}}', created])).toBe('created');
    expect([await listed(false, created), await listed(true, created)]).toEqual([false, true]);
    await docker(['start', created]);
    expect(await docker(['inspect', '--format', '{{.State.Status}}', created])).toBe('running');
    expect(await listed(false, created)).toBe(true);
    // Stopped once serving: node (PID 1) handles SIGTERM from then on.
    await waitFor(
      'the start-up line',
      async () => ((await docker(['logs', created])).includes('Server running') ? true : undefined),
      15_000,
    );
    expect(await timedStop(created)).toBeLessThan(2_000);
    expect([await listed(false, created), await listed(true, created)]).toEqual([false, true]);
    await docker(['rm', created]);
    expect(await listed(true, created)).toBe(false);
  });

  it('volume create / inspect and network create / inspect / ls', async () => {
    await docker(['volume', 'create', volume]);
    expect(JSON.parse(await docker(['volume', 'inspect', '--format', '{{json .}}', volume]))).toMatchObject({
      Name: volume,
      Driver: 'local',
    });
    await docker(['network', 'create', '--driver', 'bridge', network]);
    expect(JSON.parse(await docker(['network', 'inspect', '--format', '{{json .}}', network]))).toMatchObject({
      Name: network,
      Driver: 'bridge',
    });
    expect((await docker(['network', 'ls', '--format', '{{.Name}}'])).split('\n')).toContain(network);
  });

  it('run -d with -p -v -e --env-file --network --name -m --cpus --user --read-only --cap-drop=ALL', async () => {
    const envFile = join(dir, 'web.env');
    await writeFile(envFile, 'NODE_ENV=staging\n');
    await docker([
      'run', '-d', '-p', `127.0.0.1:0:${port}`, '-v', `${volume}:/app/logs`, '-e', 'LOG_LEVEL=debug', '--env-file', envFile,
      '--network', network, '--name', web, '-m', '512m', '--cpus=1', '--user', '1000:1000', '--read-only', '--cap-drop=ALL', image,
    ]); // prettier-ignore
    baseUrl = await publishedUrl(web, port);
    await waitForHttp(baseUrl);
    const host = await inspectJson<Record<string, unknown>>(web, '{{json .HostConfig}}');
    expect(host).toMatchObject({ Memory: 512 * 1024 * 1024, NanoCpus: 1e9, ReadonlyRootfs: true, CapDrop: ['ALL'] });
    expect(await docker(['inspect', '--format', '{{.Config.User}}', web])).toBe('1000:1000');
    expect(await docker(['exec', web, 'printenv', 'LOG_LEVEL', 'NODE_ENV'])).toBe('debug\nstaging');
  });

  describe('the HTTP contract on the published port', () => {
    simpleContract(() => baseUrl, { environment: 'staging' });
    commonContract(() => baseUrl);
  });

  it('logs shows the start-up line; logs -f follows new lines', async () => {
    expect(await docker(['logs', web])).toContain(startedLine('simple', port));
    const marker = `follow-${stage.runId}`;
    const followed = followLogsUntil(web, new RegExp(marker), 15_000);
    // Request until the follower has seen one: it may attach after the first request.
    let seen = false;
    void followed.then(() => (seen = true), () => (seen = true)); // prettier-ignore
    while (!seen) {
      await fetch(`${baseUrl}/api/users?${marker}`);
      await new Promise((r) => setTimeout(r, 300));
    }
    expect(await followed).toContain(`/api/users?${marker}`);
  });

  it('exec runs commands inside it, as the node user with the root file system read-only', async () => {
    expect(await docker(['exec', web, 'id', '-u'])).toBe('1000');
    expect(await docker(['exec', web, 'node', '/app/health-check.mjs'])).toBe('');
    // The check fails on anything but a 200, saying what came instead.
    await expect(docker(['exec', web, 'node', '/app/health-check.mjs', '/nowhere'])).rejects.toThrow(
      /health check: \/nowhere answered 404/,
    );
    await expect(docker(['exec', web, 'touch', '/tmp/x'])).rejects.toThrow(/Read-only file system/);
  });

  it('cp copies the log file out of /app/logs', async () => {
    await docker(['cp', `${web}:/app/logs/simple.log`, join(dir, 'simple.log')]);
    const lines = (await readFile(join(dir, 'simple.log'), 'utf8')).trim().split('\n');
    expect(lines.map((l) => (JSON.parse(l) as { msg: string }).msg)).toContain(startedLine('simple', port));
  });

  it('inspect reports the image health check as healthy, within its start period (probed every second)', async () => {
    const started = Date.parse(await docker(['inspect', '--format', '{{.State.StartedAt}}', web]));
    const state = await waitHealthy(web, 60_000);
    expect(state.Health?.Log.at(-1)?.ExitCode).toBe(0);
    const { firstHealthy } = await startAndHealthy(web);
    expect((firstHealthy ?? Infinity) - started).toBeLessThan(healthyWithinMs);
    console.log(`${image}: healthy ${(((firstHealthy ?? NaN) - started) / 1000).toFixed(1)} s after start`);
  });

  it('stop ends it within 2 s with exit code 0 (node is PID 1 and handles SIGTERM); rm removes it', async () => {
    const stopMs = await timedStop(web);
    expect(stopMs).toBeLessThan(2_000);
    expect(await docker(['inspect', '--format', '{{.State.ExitCode}}', web])).toBe('0');
    // Not a terminal: JSON lines (LOG_FORMAT=auto), the last one saying it stopped.
    expect(JSON.parse(await docker(['logs', '--tail', '1', web]))).toMatchObject({ msg: 'stopped', name: 'simple' });
    await docker(['rm', web]);
    expect(await listed(true, web)).toBe(false);
  });
});
