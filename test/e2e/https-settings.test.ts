import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@sample-services/testing/repo-root';

const script = join(repoRoot, 'deploy/nginx/https-settings.sh');

/**
 * deploy/nginx/https-settings.sh alone, as the nginx image's entrypoint runs it, with a temporary file in place
 * of /run/nginx-https/: the ports no container test can publish (443) or name (an ephemeral one), and bad values.
 * test/e2e/proxy-nginx-https.test.ts runs nginx with what it writes.
 */
describe('deploy/nginx/https-settings.sh', () => {
  let dir: string;
  let runs = 0;
  const run = (env: Record<string, string>): { status: number | null; stdout: string; stderr: string; file: string } => {
    const file = join(dir, `${++runs}`, 'settings.conf');
    const child = spawnSync('sh', [script, file], { env: { PATH: process.env.PATH ?? '', ...env }, encoding: 'utf8' });
    return { status: child.status, stdout: child.stdout, stderr: child.stderr, file };
  };
  const written = async (env: Record<string, string>): Promise<string> => {
    const { status, stderr, file } = run(env);
    expect([status, stderr]).toEqual([0, '']);
    return readFile(file, 'utf8');
  };
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'https-settings-'));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('names the published host port in the redirect, with or without an address', async () => {
    for (const published of ['8443', '127.0.0.1:8443', '[::1]:8443']) {
      expect(await written({ PROXY_HTTPS_PORT: published }), published).toBe('set $redirect_port ":8443";\n');
    }
  });

  it("names none for 443, HTTPS's own port", async () => {
    for (const published of ['443', '127.0.0.1:443']) {
      expect(await written({ PROXY_HTTPS_PORT: published }), published).toBe('');
    }
    expect(run({ PROXY_HTTPS_PORT: '443' }).stdout).toContain('the redirect to HTTPS names no port (443)');
  });

  it('names none for an ephemeral port, which only the engine knows, and says so', async () => {
    for (const published of ['127.0.0.1:0', '127.0.0.1:', '0']) {
      const { status, stdout, file } = run({ PROXY_HTTPS_PORT: published });
      expect([status, await readFile(file, 'utf8')], published).toEqual([0, '']);
      expect(stdout).toContain(`the redirect to HTTPS names no port: PROXY_HTTPS_PORT "${published}" is an ephemeral port`);
    }
  });

  it('writes the port and Strict-Transport-Security together', async () => {
    expect(await written({ PROXY_HTTPS_PORT: '127.0.0.1:8443', HSTS_MAX_AGE: '31536000' })).toBe(
      'set $redirect_port ":8443";\nif ($scheme = https) {\n    set $hsts "max-age=31536000";\n}\n',
    );
  });

  it('stops with one line naming the variable, and writes nothing, for a value that is not a port or a number', () => {
    const cases: [string, Record<string, string>][] = [
      ...['', 'abc', '127.0.0.1:84a3', '8443-8444', '65536', '123456'].map((published): [string, Record<string, string>] => [
        'PROXY_HTTPS_PORT',
        { PROXY_HTTPS_PORT: published },
      ]),
      ['HSTS_MAX_AGE', { PROXY_HTTPS_PORT: '8443', HSTS_MAX_AGE: '1y' }],
    ];
    for (const [variable, env] of cases) {
      const { status, stderr, file } = run(env);
      expect([status, stderr.trimEnd().split('\n'), existsSync(file)], JSON.stringify(env)).toEqual([
        1,
        [expect.stringContaining(`${variable} must be`)],
        false,
      ]);
    }
  });
});
