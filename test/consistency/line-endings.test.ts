import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '@sample-services/testing/repo-root';

// A checkout on Windows (core.autocrlf=true, Git for Windows' default) turns LF into CRLF unless
// .gitattributes says otherwise; a script with CRLF fails at its shebang, in a container too.
// The clone holds what is committed, so this checks the committed .gitattributes.

/** What a shell, node, nginx, Docker or a container reads: scripts by name, or by their shebang. */
const runsAsIs = (path: string, text: string): boolean =>
  text.startsWith('#!') ||
  /\.(sh|js|mjs|cjs|ts|lua|conf|ya?ml|env|json)$/.test(path) ||
  basename(path) === 'Dockerfile' ||
  path === 'deploy/compose/dev-db-password';

describe('line endings of a checkout with core.autocrlf=true (a Windows checkout)', () => {
  let clone = '';
  let files: string[] = [];

  beforeAll(() => {
    const parent = mkdtempSync(join(tmpdir(), 'crlf-clone-'));
    clone = join(parent, 'repo');
    execFileSync('git', ['-c', 'core.autocrlf=true', 'clone', '--quiet', repoRoot, clone], { stdio: 'pipe' });
    files = execFileSync('git', ['ls-files', '-z'], { cwd: clone, encoding: 'utf8' }).split('\0').filter(Boolean);
  });
  afterAll(() => {
    if (clone !== '') rmSync(join(clone, '..'), { recursive: true, force: true });
  });

  it('keeps LF in every script and every file the images and stacks read', () => {
    const scripts = files.filter((path) => runsAsIs(path, readFileSync(join(clone, path), 'latin1')));
    expect(scripts).toContain('.ci/run');
    expect(scripts).toContain('Dockerfile');
    expect(scripts.filter((path) => readFileSync(join(clone, path), 'latin1').includes('\r'))).toEqual([]);
  });

  it('runs a script through its shebang: backup.sh without arguments prints its usage', () => {
    const run = spawnSync(join(clone, 'deploy/compose/backup.sh'), [], { cwd: clone, encoding: 'utf8' });
    expect({ status: run.status, stderr: run.stderr }).toEqual({
      status: 2,
      stderr: `usage: ${join(clone, 'deploy/compose/backup.sh')} [docker compose options] FILE\n`,
    });
  });
});
