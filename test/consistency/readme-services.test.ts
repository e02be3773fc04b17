import { serviceNames, services, stackNames, stacks } from '@sample-services/manifest';
import { describe, expect, it } from 'vitest';
import { tablesOf, tableWithHeader } from './support/markdown.js';
import { readRepoFile, repoFileExists, serviceReadmeOf as readmeOf } from './support/repo-files.js';

const readme = readRepoFile('README.md');

describe("README's service table", () => {
  it('is the first table and has one row per manifest service, in its order, linked to its README, with its spec, port and summary', () => {
    const [first] = tablesOf(readme);
    expect(first?.header).toEqual(['Service', 'Spec', 'Default port', 'What it does']);
    const expected = serviceNames.map((name) => {
      const { spec, port, summary } = services[name];
      return [`[\`${name}\`](${readmeOf(name)})`, spec, String(port), summary];
    });
    expect(first?.rows).toEqual(expected);
  });

  it.each(serviceNames)("links a README of %s that exists and names the service's port in its opening", (name) => {
    expect(repoFileExists(readmeOf(name)), `${readmeOf(name)} is missing`).toBe(true);
    const text = readRepoFile(readmeOf(name));
    expect(text.startsWith(`# \`${name}\``), `${readmeOf(name)} begins with "# \`${name}\`"`).toBe(true);
    const opening = text.split('\n## ', 1)[0] ?? '';
    expect(opening).toMatch(new RegExp(`\\bport ${services[name].port}\\b`));
  });
});

describe("README's stack table", () => {
  it('has one row per manifest stack: its members in start order, then what compose adds, its npm start and compose file', () => {
    const table = tableWithHeader(readme, ['Stack', 'Members, in start order', 'Without containers', 'Compose']);
    const rows = table.rows.map(([stack = '', members = '', local = '', file = '']) => [
      stack,
      [...members.matchAll(/`([^`]+)`/g)].map((m) => m[1]),
      local,
      file,
    ]);
    const expected = stackNames.map((name) => [
      `\`${name}\``,
      [...stacks[name].members.map((m) => m.as), ...stacks[name].composeOnly],
      name === 'simple' ? '`npm start`' : `\`npm start -- ${name}\``,
      `\`deploy/compose/compose.${name}.yml\``,
    ]);
    expect(rows).toEqual(expected);
  });
});
