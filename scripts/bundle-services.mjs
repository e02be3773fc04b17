// Bundles each compiled service (services/<name>/dist/main.js, after tsc -b) into one file,
// services/<name>/dist/bundle/main.js, which the image and the tests run: Node then reads and
// resolves one module instead of several hundred, which is most of a service's start-up.
//
//   node scripts/bundle-services.mjs [name ...]     (default: every service of the manifest)
//
// Left out of the bundle: native addons and optional peers, which stay in node_modules.
// A worker a module starts with `new Worker(new URL('./x.js', import.meta.url))` gets a bundle of
// its own beside main.js, where that URL points once the module is inside main.js.
// The bundle sits one folder below dist/, like the compiled modules it replaces, so a path a
// module computes relative to its own URL ('../../dist/browser/') still lands in the same place.
import { readFile, rm } from 'node:fs/promises';
import { basename, dirname, join, relative, sep } from 'node:path';
import { isBuiltin } from 'node:module';
import process from 'node:process';
import { build } from 'esbuild';
import { serviceNames } from '@svc/manifest';

const external = ['better-sqlite3', 'pino-pretty'];
// Bundled CommonJS packages call require(); an ES module has none of its own.
const banner = "import { createRequire as bundleCreateRequire } from 'node:module'; const require = bundleCreateRequire(import.meta.url);";
const workerUrl = /new URL\(([^;]*?)import\.meta\.url\s*\)/g;
const jsLiteral = /'\.\/([\w.-]+\.js)'/;

/** Bundles `entries` into `outdir`, returning the worker modules they start. */
async function bundle(entries, outdir) {
  const workers = new Set();
  // What a module imports with import() stays out, loaded as compiled when imported (the OpenTelemetry
  // SDK, kit/tracing-sdk.js, unless an OTLP endpoint is set): a relative path made relative to the
  // bundle, which works wherever the repository's layout is kept (the image keeps it).
  const onDemand = {
    name: 'on-demand',
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, ({ path, kind, resolveDir }) => {
        if (kind !== 'dynamic-import') return undefined;
        if (!path.startsWith('.')) return { path, external: true };
        // An import specifier: '/' between its segments on every system.
        return { path: `./${relative(outdir, join(resolveDir, path)).split(sep).join('/')}`, external: true };
      });
    },
  };
  // Node's ES module wrapper of a built-in reads every export once, and among node:http's are the
  // WebSocket classes, whose getters load all of Node's own undici (tens of ms at each start). Taken
  // through require(), a built-in's exports are read where the code uses them.
  const builtinsByRequire = {
    name: 'builtins-by-require',
    setup(builder) {
      builder.onResolve({ filter: /.*/ }, ({ path, kind }) =>
        kind === 'import-statement' && isBuiltin(path) ? { path, namespace: 'builtin-by-require' } : undefined,
      );
      builder.onLoad({ filter: /.*/, namespace: 'builtin-by-require' }, ({ path }) => ({
        contents: `module.exports = require(${JSON.stringify(path)});`,
        loader: 'js',
      }));
    },
  };
  const findWorkers = {
    name: 'find-workers',
    setup(builder) {
      builder.onLoad({ filter: /[\\/](packages|services)[\\/][^\\/]+[\\/]dist[\\/].*\.js$/ }, async ({ path }) => {
        for (const [, args] of (await readFile(path, 'utf8')).matchAll(workerUrl)) {
          const file = jsLiteral.exec(args)?.[1];
          if (file !== undefined) workers.add(join(dirname(path), file));
        }
        return undefined;
      });
    },
  };
  await build({
    // Named by file: main.js, and each worker under the name its URL gives.
    entryPoints: Object.fromEntries(entries.map((entry) => [basename(entry, '.js'), entry])),
    outdir,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node22',
    external,
    banner: { js: banner },
    // Whitespace and syntax only: names stay, as Fastify's and avvio's messages show them.
    minifyWhitespace: true,
    minifySyntax: true,
    logLevel: 'warning',
    plugins: [onDemand, builtinsByRequire, findWorkers],
  });
  return [...workers];
}

for (const name of process.argv.length > 2 ? process.argv.slice(2) : serviceNames) {
  if (!serviceNames.includes(name)) throw new Error(`unknown service ${name}; one of ${serviceNames.join(', ')}`);
  const outdir = `services/${name}/dist/bundle`;
  await rm(outdir, { recursive: true, force: true });
  const bundled = new Map(); // output name -> source
  let entries = [`services/${name}/dist/main.js`];
  while (entries.length > 0) {
    for (const entry of entries) {
      const other = bundled.get(basename(entry));
      if (other !== undefined && other !== entry)
        throw new Error(`${name}: ${entry} and ${other} would both be bundled as ${basename(entry)}`);
      bundled.set(basename(entry), entry);
    }
    entries = (await bundle(entries, outdir)).filter((worker) => !bundled.has(basename(worker)));
  }
}
