/**
 * The lift (issue 43): a reader copies one service folder and the packages its package.json names into a
 * repository of their own, keeping the layout, and it installs, builds and runs there. Each service here is
 * copied so into an empty folder outside the workspace (no root package.json, no root tsconfig), installed
 * from npm's cache, built, started as a process and held to its contract suite.
 */
import { execFile } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative, resolve } from 'node:path';
import { promisify } from 'node:util';
import type { ServiceName } from '@sample-services/manifest';
import { commonContract } from '@sample-services/testing/contract/common';
import { databaseContract } from '@sample-services/testing/contract/database';
import { proxyContract } from '@sample-services/testing/contract/proxy';
import { startEchoUpstream, type EchoUpstream } from '@sample-services/testing/echo-upstream';
import { repoRoot } from '@sample-services/testing/repo-root';
import { startServiceIn, type ServiceProcess } from '@sample-services/testing/service-process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/** Copying, an npm install per folder from the cache and a cold tsc -b take 1-3 minutes on 2 busy cores. */
const liftTimeout = 600_000;

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}
const manifestOf = (folder: string): Manifest => JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')) as Manifest;

/** The folder and, transitively, every folder its package.json names by `file:`, relative to the repository root. */
function declaredFolders(folder: string, found = new Set<string>()): Set<string> {
  found.add(folder);
  const { dependencies, devDependencies } = manifestOf(join(repoRoot, folder));
  for (const spec of Object.values({ ...dependencies, ...devDependencies }).filter((s) => s.startsWith('file:'))) {
    const target = relative(repoRoot, resolve(repoRoot, folder, spec.slice('file:'.length)));
    if (!found.has(target)) declaredFolders(target, found);
  }
  return found;
}

/** npm as the reader runs it: without the variables of an `npm run` or of vitest (NODE_ENV=test) around this test. */
async function npm(cwd: string, ...args: string[]): Promise<void> {
  const env = Object.fromEntries(Object.entries(process.env).filter(([key]) => !key.startsWith('npm_') && key !== 'NODE_ENV'));
  await promisify(execFile)('npm', args, { cwd, env, maxBuffer: 16 * 1024 * 1024 });
}

interface Lifted {
  root: string;
  /** Relative to root: the service's folder and the packages' folders. */
  folders: string[];
  service: string;
}

/** Copies the service and its declared packages (sources only), installs each folder, and builds the service. */
async function lift(name: ServiceName): Promise<Lifted> {
  const root = mkdtempSync(join(tmpdir(), `svc-lift-${name}-`));
  const folders = [...declaredFolders(`services/${name}`)];
  const copied = (path: string): boolean => !['node_modules', 'dist'].includes(basename(path)) && !path.endsWith('.tsbuildinfo');
  for (const folder of folders) cpSync(join(repoRoot, folder), join(root, folder), { recursive: true, filter: copied });
  // npm installs nothing for a linked (file:) folder's own dependencies: each folder is installed, as the README says.
  for (const folder of folders) await npm(join(root, folder), 'install', '--prefer-offline', '--no-audit', '--no-fund');
  const service = join(root, 'services', name);
  await npm(service, 'run', 'build');
  return { root, folders, service };
}

/** Every package name installed under the folder, in any node_modules at any depth; links are named, not followed. */
function installedPackages(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => (entry.name === 'node_modules' ? packagesIn(join(dir, entry.name)) : installedPackages(join(dir, entry.name))));
}
function packagesIn(modules: string, scope = ''): string[] {
  return readdirSync(modules, { withFileTypes: true })
    .filter((entry) => !entry.name.startsWith('.'))
    .flatMap((entry) => {
      const path = join(modules, entry.name);
      if (scope === '' && entry.name.startsWith('@')) return packagesIn(path, `${entry.name}/`);
      return [`${scope}${entry.name}`, ...(entry.isDirectory() ? installedPackages(path) : [])];
    });
}

/** The install's checks: shared packages by path in every lockfile, no tracing anywhere, and what the service needs. */
function installChecks(lifted: () => Lifted, expected: string[]): void {
  it('resolves each @sample-services package a folder declares to its copied folder, as a link in that folder’s lockfile', () => {
    const { root, folders } = lifted();
    const folderOf = new Map(folders.map((folder) => [manifestOf(join(root, folder)).name, folder]));
    for (const folder of folders) {
      const { dependencies, devDependencies } = manifestOf(join(root, folder));
      const declared = Object.keys({ ...dependencies, ...devDependencies }).filter((name) => name.startsWith('@sample-services/'));
      const lock = JSON.parse(readFileSync(join(root, folder, 'package-lock.json'), 'utf8')) as {
        packages: Record<string, { resolved?: string; link?: boolean }>;
      };
      const locked = Object.entries(lock.packages).filter(([path]) => path.startsWith('node_modules/@sample-services/'));
      expect(locked.map(([path]) => path.slice('node_modules/'.length)).sort(), folder).toEqual(declared.sort());
      for (const [path, entry] of locked) {
        expect(entry, `${folder}: ${path}`).toEqual({
          resolved: relative(folder, folderOf.get(path.slice('node_modules/'.length)) ?? ''),
          link: true,
        });
      }
    }
  });

  it('installs no tracing (no OpenTelemetry package but the API, no @sample-services/telemetry) and what the service runs on', () => {
    const installed = installedPackages(lifted().root);
    // But OpenTelemetry's no-op facade: prom-client (the metrics) requires it for its exemplars (docs/observability-traces.md).
    const tracing = installed.filter(
      (name) => (name.startsWith('@opentelemetry/') && name !== '@opentelemetry/api') || name === '@sample-services/telemetry',
    );
    expect(tracing).toEqual([]);
    expect(installed).toEqual(expect.arrayContaining(expected));
  });
}

describe('services/database (variant B) lifted out with the packages it declares', () => {
  let lifted: Lifted;
  let service: ServiceProcess;
  beforeAll(async () => {
    lifted = await lift('database');
    service = await startServiceIn(lifted.service, 'database', { DATA_DIR: join(lifted.root, 'data') });
  }, liftTimeout);
  afterAll(async () => {
    await service?.stop();
    if (lifted !== undefined) rmSync(lifted.root, { recursive: true, force: true });
  });

  installChecks(() => lifted, ['@sample-services/kit', '@sample-services/users', 'better-sqlite3', 'pg']);
  databaseContract(() => service.baseUrl);
  commonContract(() => service.baseUrl);
});

describe('services/proxy lifted out with the packages it declares, in front of the echo upstream', () => {
  let lifted: Lifted;
  let upstream: EchoUpstream;
  let proxy: ServiceProcess;
  beforeAll(async () => {
    lifted = await lift('proxy');
    upstream = await startEchoUpstream();
    // 2 s: the contract's 504 check needs a short upstream timeout (packages/testing/src/contract/proxy.ts).
    proxy = await startServiceIn(lifted.service, 'proxy', { UPSTREAM_URL: upstream.url, UPSTREAM_TIMEOUT_MS: '2000' });
  }, liftTimeout);
  afterAll(async () => {
    await proxy?.stop();
    await upstream?.close();
    if (lifted !== undefined) rmSync(lifted.root, { recursive: true, force: true });
  });

  installChecks(() => lifted, ['@sample-services/kit', '@sample-services/upstream', 'undici']);
  proxyContract({ baseUrl: () => proxy.baseUrl, upstream: () => upstream });
});
