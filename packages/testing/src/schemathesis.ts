import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The release the settings below were chosen for (its checks and generators change between releases). */
const requiredVersion = /\bversion 4\.25\./;

/**
 * Where Schemathesis is looked for, in order: SCHEMATHESIS (the path of its `st`, as .ci/run sets
 * it), `st` on PATH, and the virtual environment the shared tools' schemathesis/install.sh makes
 * by default.
 */
const candidates = (): string[] => [process.env.SCHEMATHESIS ?? '', 'st', '/tmp/st-venv/bin/st'].filter((c) => c !== '');

/** The path of a Schemathesis 4.25 `st`, or why there is none. */
export function findSchemathesis(): { command: string } | { missing: string } {
  const found: string[] = [];
  for (const command of candidates()) {
    const run = spawnSync(command, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (run.error !== undefined || run.status !== 0) continue;
    if (requiredVersion.test(run.stdout)) return { command };
    found.push(`${command}: ${run.stdout.trim()}`);
  }
  const tried = found.length > 0 ? `found only ${found.join('; ')}` : `tried ${candidates().join(', ')}`;
  return { missing: `Schemathesis 4.25 is not installed (${tried}); install it with the shared tools' schemathesis/install.sh` };
}

/** The settings every service's document is held to (issue 23): every check, a fixed seed, up to 1,000 examples per operation. */
export const schemathesisArgs = ['--checks', 'all', '--seed', '20261122', '--max-examples', '1000'] as const;

/**
 * Runs `st run` against the document a service serves at `baseUrl`/openapi.json, in a directory
 * of its own (Schemathesis keeps its example database in the working directory), and resolves
 * with its exit code (0: no failure found) and everything it printed.
 */
export async function runSchemathesis(command: string, baseUrl: string): Promise<{ code: number | null; output: string }> {
  const cwd = mkdtempSync(join(tmpdir(), 'schemathesis-'));
  try {
    const args = ['run', `${baseUrl}/openapi.json`, '--url', baseUrl, ...schemathesisArgs, '--no-color'];
    const child = spawn(command, args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    const code = await new Promise<number | null>((resolve, reject) => {
      child.once('error', reject);
      child.once('close', resolve);
    });
    return { code, output };
  } finally {
    rmSync(cwd, { recursive: true, force: true });
  }
}
