import { serviceNames, services } from '@svc/manifest';
import { describe, expect, it } from 'vitest';
import { tablesOf } from './support/markdown.js';
import { readRepoFile } from './support/repo-files.js';

describe("README's service table", () => {
  it('is the first table and has one row per manifest service, in its order, with its spec, port and summary', () => {
    const [first] = tablesOf(readRepoFile('README.md'));
    expect(first?.header).toEqual(['Service', 'Spec', 'Default port', 'What it does']);
    const expected = serviceNames.map((name) => {
      const { spec, port, summary } = services[name];
      return [`\`${name}\``, spec, String(port), summary];
    });
    expect(first?.rows).toEqual(expected);
  });
});
