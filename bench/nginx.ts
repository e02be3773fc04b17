import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '@svc/testing/free-port';
import { repoRoot, type ServerSpec } from './server-process.js';

export function nginxInstalled(): boolean {
  return spawnSync('nginx', ['-v']).error === undefined;
}

/** A tuned nginx (bench/nginx-tuned.conf) in front of `upstreamPort`, in its own temporary directory. */
export async function tunedNginx(upstreamPort: number, cpus: string | undefined): Promise<{ spec: ServerSpec; cleanup: () => void }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-nginx-'));
  const port = await freePort();
  const config = readFileSync(join(repoRoot, 'bench/nginx-tuned.conf'), 'utf8')
    .replaceAll('{{DIR}}', dir)
    .replaceAll('{{PORT}}', String(port))
    .replaceAll('{{UPSTREAM_PORT}}', String(upstreamPort));
  writeFileSync(join(dir, 'nginx.conf'), config);
  return {
    spec: { label: 'nginx (tuned)', command: 'nginx', args: ['-p', dir, '-c', join(dir, 'nginx.conf'), '-e', 'stderr'], port, cpus },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
