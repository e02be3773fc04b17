import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ServiceName } from '@sample-services/manifest';
import { repoRoot } from './docker.js';
import { preloadWorkspace } from './images.js';

/** The workspace folder of an `@sample-services/<name>` package: packages/<name> or services/<name>. */
function folderOf(pkg: string): string {
  const name = pkg.replace(/^@sample-services\//, '');
  const folder = ['packages', 'services'].map((dir) => `${dir}/${name}`).find((f) => existsSync(join(repoRoot, f, 'package.json')));
  if (folder === undefined) throw new Error(`no workspace folder for ${pkg}`);
  return folder;
}

const dependenciesOf = (folder: string): string[] =>
  Object.keys((JSON.parse(readFileSync(join(repoRoot, folder, 'package.json'), 'utf8')) as { dependencies?: object }).dependencies ?? {});

/**
 * What a service's image must hold, from the package.json files: its workspace and every
 * workspace it depends on, the OpenTelemetry preload (sorted), and the packages from the registry those depend on.
 */
export function runtimeOf(service: ServiceName): { workspaces: string[]; packages: Set<string> } {
  const workspaces = new Set<string>();
  const packages = new Set<string>();
  const visit = (folder: string): void => {
    if (workspaces.has(folder)) return;
    workspaces.add(folder);
    for (const dep of dependenciesOf(folder)) {
      if (dep.startsWith('@sample-services/')) visit(folderOf(dep));
      else packages.add(dep);
    }
  };
  visit(`services/${service}`);
  visit(preloadWorkspace);
  return { workspaces: [...workspaces].sort(), packages };
}
