import { dirname, join, normalize } from 'node:path';
import { serviceNames } from '@sample-services/manifest';
import { describe, expect, it } from 'vitest';
import { docsPages, readRepoFile, repoFileExists, serviceReadmeOf } from './support/repo-files.js';

const pages = ['README.md', 'bench/README.md', ...docsPages(), ...serviceNames.map(serviceReadmeOf)];

/** A heading's anchor as GitHub makes it: lower case, punctuation dropped, spaces as hyphens. */
const slug = (heading: string): string =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');

/** The anchors of a page's headings (outside code blocks). */
function anchorsOf(path: string): Set<string> {
  const text = readRepoFile(path).replace(/^```[\s\S]*?^```$/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.+)$/gm)].map((m) => slug(m[1] ?? '')));
}

describe('links between the documents', () => {
  it.each(pages)('every relative link of %s reaches a file, and a heading of it when it names one', (page) => {
    const text = readRepoFile(page).replace(/^```[\s\S]*?^```$/gm, '');
    const broken: string[] = [];
    for (const [, target = ''] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/.test(target)) continue; // another site
      const [file = '', anchor] = target.split('#');
      const path = file === '' ? page : normalize(join(dirname(page), file));
      if (!repoFileExists(path)) broken.push(`${target}: no file ${path}`);
      else if (anchor !== undefined && path.endsWith('.md') && !anchorsOf(path).has(anchor))
        broken.push(`${target}: no heading #${anchor} in ${path}`);
    }
    expect(broken).toEqual([]);
  });
});
