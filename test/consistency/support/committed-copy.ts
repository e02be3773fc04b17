/**
 * A copy of what git would commit under a directory of the repository: its tracked files and the
 * untracked ones it does not ignore. A test renders from it to see exactly what a fresh clone holds,
 * without the files a developer keeps beside them (a git-ignored password).
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { repoRoot } from '@sample-services/testing/repo-root';

/** Git's paths under `dir` (from the root): tracked, or untracked and not ignored; none deleted. */
export function committablePaths(dir: string): string[] {
  const listed = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard', '--', dir], {
    cwd: repoRoot,
    encoding: 'utf8',
  });
  return listed
    .split('\0')
    .filter(Boolean)
    .filter((path) => existsSync(join(repoRoot, path)));
}

/** Whether git ignores a path of the repository (a tracked file is never ignored). */
export function gitIgnores(path: string): boolean {
  try {
    execFileSync('git', ['check-ignore', '--quiet', '--', path], { cwd: repoRoot, stdio: 'ignore' });
    return true;
  } catch (error) {
    // Exit status 1: not ignored; anything else is git failing, which must not read as "not ignored".
    if ((error as { status?: number }).status === 1) return false;
    throw error;
  }
}

/** A temporary directory holding `dir`'s committable files at the same paths from its root. */
export function committedCopy(dir: string): { root: string; remove(): void } {
  const root = mkdtempSync(join(tmpdir(), 'committed-'));
  // cpSync makes the directories a file's path needs.
  for (const path of committablePaths(dir)) cpSync(join(repoRoot, path), join(root, path));
  return { root, remove: () => rmSync(root, { recursive: true, force: true }) };
}
