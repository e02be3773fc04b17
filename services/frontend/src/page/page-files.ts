/**
 * The files of the users page, read and hashed once at start-up: the HTML, the stylesheet, the
 * icon and the script modules that src/page/browser compiles to dist/browser (tsc -b builds
 * them with the service, so they are in the image's dist like the rest of its code).
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { pageDocument } from './document.js';
import { icon } from './icon.js';
import { stylesheet } from './stylesheet.js';

export interface StaticFile {
  body: Buffer;
  contentType: string;
  /** Strong validator: a hash of the body, quoted. */
  etag: string;
}

export interface PageFiles {
  /** A hash of every asset together: assets live under /assets/<build>/, so a new build has new URLs. */
  build: string;
  page: StaticFile;
  /** By file name. */
  assets: ReadonlyMap<string, StaticFile>;
}

/**
 * dist/browser of this package, from this module's place in src/page or dist/page (tests run
 * the source, the service runs dist; both find the same compiled scripts).
 */
export const browserScriptsDir = fileURLToPath(new URL('../../dist/browser/', import.meta.url));

const hash = (data: Buffer | string): string => createHash('sha256').update(data).digest('base64url');

function file(body: Buffer, contentType: string): StaticFile {
  return { body, contentType, etag: `"${hash(body).slice(0, 32)}"` };
}

/** Reads the compiled scripts (not their declarations) and builds the page around them. */
export function loadPageFiles(scriptsDir = browserScriptsDir): PageFiles {
  const entry = join(scriptsDir, 'main.js');
  if (!existsSync(entry)) {
    throw new Error(`the users page's scripts are not built (no ${entry}): run npx tsc -b`);
  }
  const scripts = readdirSync(scriptsDir)
    .filter((name) => name.endsWith('.js'))
    .sort();
  const assets = new Map<string, StaticFile>([
    ['page.css', file(Buffer.from(stylesheet), 'text/css; charset=utf-8')],
    ['icon.svg', file(Buffer.from(icon), 'image/svg+xml; charset=utf-8')],
    ...scripts.map((name): [string, StaticFile] => [name, file(readFileSync(join(scriptsDir, name)), 'text/javascript; charset=utf-8')]),
  ]);
  const build = hash([...assets].map(([name, asset]) => `${name} ${asset.etag}`).join('\n')).slice(0, 16);
  const html = pageDocument({ base: `/assets/${build}/`, modules: scripts.filter((name) => name !== 'main.js') });
  return { build, page: file(Buffer.from(html), 'text/html; charset=utf-8'), assets };
}
