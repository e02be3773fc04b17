import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { repoRoot } from './repo-root.js';

export interface LocalCertificates {
  dir: string;
  /** The server's certificate and key files, as TLS_CERT_FILE and TLS_KEY_FILE take them. */
  certFile: string;
  keyFile: string;
  /** The local authority's certificate (PEM), the one a client trusts. */
  ca: Buffer;
  /** What scripts/local-cert.sh printed. */
  output: string;
  remove: () => Promise<void>;
}

/** Runs scripts/local-cert.sh with `env` into `dir`; resolves with what it printed. */
export async function runLocalCert(dir: string, env: NodeJS.ProcessEnv = {}): Promise<string> {
  const { stdout } = await promisify(execFile)(join(repoRoot, 'scripts/local-cert.sh'), [dir], { env: { ...process.env, ...env } });
  return stdout;
}

/** A local authority and a certificate for localhost and 127.0.0.1, made by scripts/local-cert.sh with openssl in a temporary folder. */
export async function makeLocalCertificates(): Promise<LocalCertificates> {
  const dir = await mkdtemp(join(tmpdir(), 'local-cert-'));
  const output = await runLocalCert(dir, { LOCAL_CERT_TOOL: 'openssl' });
  return {
    dir,
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
    ca: await readFile(join(dir, 'ca.crt')),
    output,
    remove: () => rm(dir, { recursive: true, force: true }),
  };
}
