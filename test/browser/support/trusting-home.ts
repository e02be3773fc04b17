/**
 * A home folder whose NSS database trusts one authority, as docs/https.md has a user do with certutil
 * (Debian's libnss3-tools): Chromium on Linux takes the authorities a user added there.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Whether certutil is installed (libnss3-tools). */
export const certutilInstalled = spawnSync('certutil', ['-H'], { stdio: 'ignore' }).error === undefined;

/** A new home folder whose NSS database trusts `caFile` to identify servers (-t C,,), nothing else added. */
export function homeTrusting(caFile: string): string {
  const home = mkdtempSync(join(tmpdir(), 'chromium-home-'));
  const db = `sql:${join(home, '.pki/nssdb')}`;
  mkdirSync(join(home, '.pki/nssdb'), { recursive: true });
  execFileSync('certutil', ['-d', db, '-N', '--empty-password']);
  execFileSync('certutil', ['-d', db, '-A', '-t', 'C,,', '-n', 'sample-services-local', '-i', caFile]);
  return home;
}
