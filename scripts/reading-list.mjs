// What a reader must read to follow each service end to end: the lines of its src/ and of every
// source file of a workspace package it reaches through imports (static or import()), tests excluded.
// Beside each total, the lines of it that hold code: comments and blank lines left out (TypeScript's parser).
// Usage: node scripts/reading-list.mjs [service...]   (prints one line per service)
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** Workspace package name -> its src/ folder: a bare import names its index.ts (manifest, telemetry), a subpath import the module of that name. */
const packageEntries = new Map(
  readdirSync(join(root, 'packages')).flatMap((folder) => {
    const manifest = join(root, 'packages', folder, 'package.json');
    if (!existsSync(manifest)) return [];
    const { name } = JSON.parse(readFileSync(manifest, 'utf8'));
    return [[name, join(root, 'packages', folder, 'src')]];
  }),
);

const importPattern = /(?:^|\s)(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;

/** The source file a specifier names, or undefined for a module outside the workspace. */
function resolveImport(from, specifier) {
  if (specifier.startsWith('.')) return resolve(dirname(from), specifier.replace(/\.js$/, '.ts'));
  for (const [name, src] of packageEntries) {
    if (specifier === name) return join(src, 'index.ts');
    if (specifier.startsWith(`${name}/`)) return join(src, `${specifier.slice(name.length + 1)}.ts`);
  }
  return undefined;
}

function reach(entry) {
  const seen = new Set();
  const pending = [entry];
  while (pending.length > 0) {
    const file = pending.pop();
    if (seen.has(file) || !existsSync(file)) continue;
    seen.add(file);
    for (const match of readFileSync(file, 'utf8').matchAll(importPattern)) {
      const target = resolveImport(file, match[1] ?? match[2]);
      if (target !== undefined) pending.push(target);
    }
  }
  return [...seen];
}

const lines = (file) => readFileSync(file, 'utf8').split('\n').length - 1;

/** The lines that hold a token of code (a template literal may span several); comments and blank lines hold none. */
function codeLines(file) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const holding = new Set();
  const visit = (node) => {
    if (node.kind >= ts.SyntaxKind.FirstJSDocNode && node.kind <= ts.SyntaxKind.LastJSDocNode) return;
    const children = node.getChildren(source);
    if (children.length > 0) return children.forEach(visit);
    if (node.kind === ts.SyntaxKind.EndOfFileToken) return;
    const first = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
    const last = source.getLineAndCharacterOfPosition(node.getEnd()).line;
    for (let line = first; line <= last; line++) holding.add(line);
  };
  visit(source);
  return holding.size;
}

const services = process.argv.length > 2 ? process.argv.slice(2) : readdirSync(join(root, 'services')).sort();
for (const service of services) {
  const files = reach(join(root, 'services', service, 'src', 'main.ts'));
  const own = files.filter((file) => relative(root, file).startsWith(`services/${service}/`));
  const total = files.reduce((sum, file) => sum + lines(file), 0);
  const ownLines = own.reduce((sum, file) => sum + lines(file), 0);
  const code = files.reduce((sum, file) => sum + codeLines(file), 0);
  console.log(`${service}: ${total} lines in ${files.length} files (${ownLines} of them in services/${service}/src; ${code} hold code)`);
}
