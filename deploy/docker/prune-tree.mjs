// Image build step, after `npm ci --omit=dev --workspace=services/<SERVICE>` in /src: npm installs every
// package that the workspaces' manifests reach through any edge, optional peers included (the kit's
// @fastify/swagger-ui, which only the services serving /docs list). This removes every installed package the
// service's production tree does not reach: from its package.json, through the workspaces it lists, each
// package's dependencies, the optional ones installed, and its peers that are not optional. Workspaces
// installed beside the service (the OpenTelemetry preload) are named after it, their trees kept too.
//   node prune-tree.mjs <service> [workspace folder ...]
import { existsSync, lstatSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';

const root = process.cwd();
const [service, ...beside] = process.argv.slice(2);
const manifestOf = (dir) => JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));

/** Node's lookup of `name` from the package in `from`: its node_modules, then each one above it. */
function locate(from, name) {
  for (let dir = from; dir.startsWith(root); dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return realpathSync(candidate);
  }
  return undefined;
}

const reached = new Set();
const visit = (dir) => {
  if (reached.has(dir)) return;
  reached.add(dir);
  const manifest = manifestOf(dir);
  const optionalPeer = (name) => manifest.peerDependenciesMeta?.[name]?.optional === true;
  const needed = [
    ...Object.keys(manifest.dependencies ?? {}),
    ...Object.keys(manifest.peerDependencies ?? {}).filter((n) => !optionalPeer(n)),
  ];
  for (const name of needed) {
    const found = locate(dir, name);
    if (found === undefined) throw new Error(`${dir}: ${name} is not installed`);
    visit(found);
  }
  // An optional dependency npm skipped (another platform's) is not an error.
  for (const name of Object.keys(manifest.optionalDependencies ?? {})) {
    const found = locate(dir, name);
    if (found !== undefined) visit(found);
  }
};
visit(join(root, 'services', service));
for (const folder of beside) visit(join(root, folder));

/** The package folders of a node_modules folder (scoped ones inside their scope), symlinks left out. */
const packagesIn = (modules) =>
  readdirSync(modules)
    .filter((name) => !name.startsWith('.'))
    .flatMap((name) =>
      name.startsWith('@') ? readdirSync(join(modules, name)).map((sub) => join(modules, name, sub)) : [join(modules, name)],
    )
    .filter((dir) => !lstatSync(dir).isSymbolicLink());

const removed = [];
const prune = (modules) => {
  if (!existsSync(modules)) return;
  for (const dir of packagesIn(modules)) {
    if (reached.has(dir)) prune(join(dir, 'node_modules'));
    else {
      rmSync(dir, { recursive: true });
      removed.push(dir.slice(root.length + 1));
    }
  }
};
prune(join(root, 'node_modules'));
for (const group of ['packages', 'services']) for (const name of readdirSync(group)) prune(join(root, group, name, 'node_modules'));
// npm reads this record of the install instead of the folders when it looks newer: it would still list the removed packages.
rmSync(join(root, 'node_modules', '.package-lock.json'), { force: true });
console.log(
  `prune-tree: ${removed.length} packages outside the production tree of ${service} removed${removed.length > 0 ? `: ${removed.join(' ')}` : ''}`,
);
