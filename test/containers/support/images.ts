import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot } from './docker.js';
import {
  imageOf,
  serviceNames,
  services as manifest,
  stacks,
  type ServiceName,
  type StackMember,
  type StackName,
} from '@sample-services/manifest';

export { imageOf, type ServiceName, type StackName };

/** The OpenTelemetry preload, which every image installs beside its service and runs it with (the Dockerfile). */
export const preloadWorkspace = 'packages/telemetry';

/** The images of this repository: one per service of the manifest, with its default port. */
export const services = serviceNames.map((service) => ({ service, port: manifest[service].port }));

/** The container port of a stack member, by its compose name (e.g. `web` of `database`: 5000). */
export function memberPort(stack: StackName, as: string): number {
  const members: readonly StackMember[] = stacks[stack].members;
  const member = members.find((m) => m.as === as);
  if (member === undefined) throw new Error(`stack ${stack} has no member ${as}`);
  return manifest[member.service].port;
}

/** What the global setup hands to the test files (vitest provide/inject). */
export interface ContainerStage {
  /** Set when no engine is available outside CI: every file skips with this message. */
  skipReason?: string;
  /** Tag of every image built for this run; compose files read it as TAG. */
  tag: string;
  /** Unique per run: compose project names, container and volume names derive from it. */
  runId: string;
  /** The OCI label values the images were built with (REVISION, VERSION, CREATED, SOURCE). */
  provenance?: Record<string, string>;
}

declare module 'vitest' {
  export interface ProvidedContext {
    containerStage: ContainerStage;
  }
}

/** A package entry of package-lock.json: what npm ci installs at that path, as its package.json declares. */
interface LockEntry {
  link?: boolean;
  resolved?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
  os?: string[];
  cpu?: string[];
}

/** npm's os/cpu fields: a list of allowed values, or of `!`-prefixed excluded ones. */
const allows = (list: string[] | undefined, value: string): boolean =>
  list === undefined || (list.some((v) => !v.startsWith('!')) ? list.includes(value) : !list.includes(`!${value}`));

/**
 * What a service's image must hold, from its package.json and the preload's and, through the lockfile, the
 * package.json of everything they reach: the workspaces it depends on (folders, sorted), and every
 * package from the registry under its name, each once. A package's dependencies, its optional ones
 * that fit this platform, and its peers that are not optional count; devDependencies never do.
 */
export function productionTreeOf(service: ServiceName): { workspaces: string[]; packages: string[] } {
  const lock = JSON.parse(readFileSync(join(repoRoot, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const workspaceManifest = (folder: string): LockEntry =>
    JSON.parse(readFileSync(join(repoRoot, folder, 'package.json'), 'utf8')) as LockEntry;
  /** Node's lookup from the package at `from` (a lock path), up through the node_modules folders above it. */
  const locate = (from: string, name: string): string => {
    for (let at = from; ;) {
      const candidate = at === '' ? `node_modules/${name}` : `${at}/node_modules/${name}`;
      const entry = lock.packages[candidate];
      if (entry !== undefined) return entry.link === true && entry.resolved !== undefined ? entry.resolved : candidate;
      if (at === '') throw new Error(`package-lock.json has no ${name} for ${from}`);
      // Up to the package whose node_modules holds `at`; from a workspace folder or a top-level package, the root.
      at = /^(.*)\/node_modules\/(?:@[^/]+\/)?[^/]+$/.exec(at)?.[1] ?? '';
    }
  };
  const workspaces = new Set<string>();
  const packages = new Set<string>();
  const seen = new Set<string>();
  const visit = (path: string): void => {
    if (seen.has(path)) return;
    seen.add(path);
    const isWorkspace = !path.includes('node_modules/');
    // A workspace's own package.json is what is under test; the lock holds the registry packages'.
    const entry = isWorkspace ? workspaceManifest(path) : lock.packages[path];
    if (entry === undefined) throw new Error(`package-lock.json has no ${path}`);
    if (isWorkspace) workspaces.add(path);
    else packages.add(path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length));
    const optional = Object.keys(entry.optionalDependencies ?? {}).filter((name) => {
      const found = lock.packages[locate(path, name)];
      return allows(found?.os, process.platform) && allows(found?.cpu, process.arch);
    });
    const peers = Object.keys(entry.peerDependencies ?? {}).filter((name) => entry.peerDependenciesMeta?.[name]?.optional !== true);
    for (const name of new Set([...Object.keys(entry.dependencies ?? {}), ...optional, ...peers])) visit(locate(path, name));
  };
  visit(`services/${service}`);
  visit(preloadWorkspace);
  return { workspaces: [...workspaces].sort(), packages: [...packages].sort() };
}

/** Whether a service's own package.json lists `name` among its dependencies. */
export function declares(service: ServiceName, name: string): boolean {
  const { dependencies = {} } = JSON.parse(readFileSync(join(repoRoot, 'services', service, 'package.json'), 'utf8')) as LockEntry;
  return name in dependencies;
}
