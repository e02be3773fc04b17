/**
 * Each workspace is a folder a copier can take away with the packages it declares: its own shared code
 * is declared by path (`file:`), so no registry is ever asked for an `@sample-services/*` name, every `@sample-services/*` its
 * source imports is declared, and none of its files reaches into another folder by a relative path.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('../../', import.meta.url));

interface Manifest {
  name: string;
  scripts?: Record<string, string>;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}

const workspaces = ['packages', 'services'].flatMap((parent) =>
  readdirSync(join(root, parent)).map((name) => {
    const folder = `${parent}/${name}`;
    return { folder, manifest: JSON.parse(readFileSync(join(root, folder, 'package.json'), 'utf8')) as Manifest };
  }),
);
const rootManifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as Manifest;
const folderOf = new Map(workspaces.map(({ folder, manifest }) => [manifest.name, folder]));

function sourceFiles(dir: string): string[] {
  let entries: string[];
  try {
    entries = readdirSync(dir);
  } catch {
    return [];
  }
  return entries.flatMap((entry) => {
    const path = join(dir, entry);
    if (statSync(path).isDirectory()) return entry === 'node_modules' || entry === 'dist' ? [] : sourceFiles(path);
    return /\.(ts|mts|js|mjs)$/.test(entry) ? [path] : [];
  });
}

/** Module specifiers of static imports, re-exports and dynamic imports. */
const specifiersOf = (text: string): string[] =>
  [...text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)'([^']+)'/g)].map((match) => match[1]!);

describe.each(workspaces)('$folder', ({ folder, manifest }) => {
  const declared = {
    ...manifest.dependencies,
    ...manifest.devDependencies,
    ...manifest.peerDependencies,
    ...manifest.optionalDependencies,
  };

  it('declares each @sample-services package by path, to that package’s folder', () => {
    for (const [name, spec] of Object.entries(declared).filter(([name]) => name.startsWith('@sample-services/'))) {
      expect(folderOf.has(name), `${name} is no workspace`).toBe(true);
      expect(spec).toBe(`file:${relative(folder, folderOf.get(name)!)}`);
    }
  });

  // The root's compiler options and tools are not copied with a folder: what its build needs, it declares
  // (@sample-services/tsconfig, whose tsconfig.json is the options they extend, builds nothing; nor do the folders
  // without a tsconfig.json, run from source by tsx).
  const builds = manifest.name !== '@sample-services/tsconfig' && existsSync(join(root, folder, 'tsconfig.json'));
  if (builds)
    it('builds alone: tsc -b, extending @sample-services/tsconfig, with its tools at the root’s versions', () => {
      expect(manifest.scripts?.build).toBe('tsc -b');
      expect(readFileSync(join(root, folder, 'tsconfig.json'), 'utf8')).toMatch(/"extends": "@sample-services\/tsconfig"/);
      expect(Object.keys(manifest.devDependencies ?? {})).toEqual(
        expect.arrayContaining(['@sample-services/tsconfig', '@types/node', 'typescript']),
      );
      for (const [name, version] of Object.entries(manifest.devDependencies ?? {}).filter(
        ([name]) => rootManifest.devDependencies?.[name],
      )) {
        expect(version, name).toBe(rootManifest.devDependencies?.[name]);
      }
    });

  const files = ['src', 'test'].flatMap((part) => sourceFiles(join(root, folder, part)));

  it('declares every @sample-services package its source imports, as a dependency', () => {
    // Its tests' @sample-services imports (the test kit) resolve through the workspace root: declared here, npm would link
    // every workspace the test kit reaches into each image's production tree, dev dependencies though they are.
    for (const file of files.filter((path) => relative(join(root, folder), path).startsWith('src'))) {
      for (const specifier of specifiersOf(readFileSync(file, 'utf8')).filter((s) => s.startsWith('@sample-services/'))) {
        const name = specifier.split('/').slice(0, 2).join('/');
        if (name === manifest.name) continue;
        expect(manifest.dependencies?.[name], `${relative(root, file)} imports ${specifier}`).toBeDefined();
      }
    }
  });

  it('reaches into no other folder by a relative path', () => {
    for (const file of files) {
      for (const specifier of specifiersOf(readFileSync(file, 'utf8')).filter((s) => s.startsWith('.'))) {
        const target = relative(join(root, folder), resolve(dirname(file), specifier));
        expect(target.startsWith('..'), `${relative(root, file)} imports ${specifier}`).toBe(false);
      }
    }
  });
});
