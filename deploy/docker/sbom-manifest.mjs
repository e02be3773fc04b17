// Image build step, before `npm sbom`: rewrites the root package.json to name only what
// `npm ci --omit=dev --workspace=services/<SERVICE>` installed. npm sbom checks the installed tree
// against the root manifest, which also names every other workspace and the dev tools: it would
// stop on each as "missing". With this manifest the SBOM lists exactly the packages in the image.
import { readFileSync, readdirSync, realpathSync, writeFileSync } from 'node:fs';
import { relative } from 'node:path';

const manifest = JSON.parse(readFileSync('package.json', 'utf8'));
// The workspaces installed are the ones linked under node_modules/@svc.
manifest.workspaces = readdirSync('node_modules/@svc').map((name) => relative('.', realpathSync(`node_modules/@svc/${name}`)));
delete manifest.devDependencies;
writeFileSync('package.json', `${JSON.stringify(manifest, null, 2)}\n`);
