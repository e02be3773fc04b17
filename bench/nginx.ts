import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@sample-services/testing/free-port';
import { repoRoot, type ServerSpec } from './server-process.js';

export function nginxInstalled(): boolean {
  return spawnSync('nginx', ['-v']).error === undefined;
}

/** The bench's nginx configurations and their labels in the table. */
const configs = {
  /** One worker, keep-alive connections to the upstream: the proxy scenario's reference. */
  tuned: { file: 'bench/nginx-tuned.conf', label: 'nginx (tuned)' },
  /** As deploy/nginx/nginx.conf: the upstream in a variable, a new upstream connection per request. */
  variable: { file: 'bench/nginx-variable.conf', label: 'nginx (variable, no keep-alive)' },
} as const;

/** An nginx with one of the bench's configurations in front of `upstreamPort`, in its own temporary directory. */
export async function benchNginx(
  config: keyof typeof configs,
  upstreamPort: number,
  cpus: string | undefined,
): Promise<{ spec: ServerSpec; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  const port = await freePort();
  const text = readFileSync(join(repoRoot, configs[config].file), 'utf8')
    .replaceAll('{{DIR}}', dir)
    .replaceAll('{{PORT}}', String(port))
    .replaceAll('{{UPSTREAM_PORT}}', String(upstreamPort));
  writeFileSync(join(dir, 'nginx.conf'), text);
  return {
    spec: { label: configs[config].label, command: 'nginx', args: ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', 'stderr'], port, cpus },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
