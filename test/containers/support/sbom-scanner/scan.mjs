// BuildKit's SBOM generator protocol (moby/buildkit docs/attestations/sbom-protocol.md): BuildKit mounts the
// final stage's root file system at BUILDKIT_SCAN_SOURCE (and other stages' under BUILDKIT_SCAN_SOURCE_EXTRAS)
// and attaches what this writes to BUILDKIT_SCAN_DESTINATION: one in-toto statement of an SPDX document per
// file system. The real scanner (Syft) catalogues much more; this one lists the npm packages, by their
// package.json in node_modules folders (links left out), which is what the image tests compare.
import { randomUUID } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

const { BUILDKIT_SCAN_SOURCE: source, BUILDKIT_SCAN_DESTINATION: destination, BUILDKIT_SCAN_SOURCE_EXTRAS: extras } = process.env;
const directories = (dir) => readdirSync(dir, { withFileTypes: true }).filter((entry) => entry.isDirectory() && !entry.isSymbolicLink());

/** Every package in a node_modules folder and in the ones nested in its packages, as name@version. */
function catalog(modules, found) {
  for (const entry of directories(modules)) {
    const path = join(modules, entry.name);
    if (entry.name.startsWith('.')) continue;
    if (entry.name.startsWith('@')) {
      catalog(path, found);
      continue;
    }
    if (!existsSync(join(path, 'package.json'))) continue;
    const { name, version } = JSON.parse(readFileSync(join(path, 'package.json'), 'utf8'));
    found.set(`${name}@${version}`, { name, version });
    if (existsSync(join(path, 'node_modules'))) catalog(join(path, 'node_modules'), found);
  }
}

function scan(root) {
  const found = new Map();
  const walk = (dir) => {
    for (const entry of directories(dir)) {
      if (dir === root && ['proc', 'sys', 'dev'].includes(entry.name)) continue;
      if (entry.name === 'node_modules') catalog(join(dir, entry.name), found);
      else walk(join(dir, entry.name));
    }
  };
  walk(root);
  const packages = [...found.values()].map(({ name, version }, i) => ({
    name,
    SPDXID: `SPDXRef-Package-npm-${i}`,
    versionInfo: version,
    downloadLocation: 'NOASSERTION',
    externalRefs: [
      { referenceCategory: 'PACKAGE-MANAGER', referenceType: 'purl', referenceLocator: `pkg:npm/${name.replace(/^@/, '%40')}@${version}` },
    ],
  }));
  const document = {
    spdxVersion: 'SPDX-2.3',
    dataLicense: 'CC0-1.0',
    SPDXID: 'SPDXRef-DOCUMENT',
    name: basename(root),
    documentNamespace: `urn:uuid:${randomUUID()}`,
    creationInfo: { created: new Date().toISOString().replace(/\.\d+Z$/, 'Z'), creators: ['Tool: sample-services-sbom-stand-in'] },
    packages,
  };
  const statement = {
    _type: 'https://in-toto.io/Statement/v0.1',
    predicateType: 'https://spdx.dev/Document',
    subject: [],
    predicate: document,
  };
  writeFileSync(join(destination, `${basename(root)}.spdx.json`), JSON.stringify(statement));
}

scan(source);
if (extras && existsSync(extras)) for (const entry of directories(extras)) scan(join(extras, entry.name));
