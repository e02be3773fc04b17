import { serviceNames, services } from '@sample-services/manifest';
import { describe, expect, it } from 'vitest';
import { variablesOfService } from './support/config-readers.js';
import { tableWithHeader } from './support/markdown.js';
import { readRepoFile, serviceReadmeOf } from './support/repo-files.js';

const unquoted = (cell: string): string => cell.replaceAll('`', '');

/** A service README's variable table as variable -> its Default cell. */
function listedVariables(service: string): Map<string, string> {
  const table = tableWithHeader(readRepoFile(serviceReadmeOf(service)), ['Variable', 'Default', 'Meaning']);
  return new Map(table.rows.map(([variable = '', fallback = '']) => [unquoted(variable), fallback]));
}

/** docs/configuration.md's table as variable -> its Default cell, where each variable's default is kept. */
function defaultsFromPage(): Map<string, string> {
  const table = tableWithHeader(readRepoFile('docs/configuration.md'), ['Variable', 'Services', 'Default', 'Meaning']);
  return new Map(table.rows.map(([variable = '', , fallback = '']) => [unquoted(variable), fallback]));
}

describe.each(serviceNames)("services/%s/README.md's variables", (service) => {
  it("lists only variables the service's config reader reads", async () => {
    const read = await variablesOfService(service);
    expect([...listedVariables(service).keys()].filter((variable) => !read.includes(variable))).toEqual([]);
  });

  it('lists every variable it reads', async () => {
    const listed = listedVariables(service);
    expect((await variablesOfService(service)).filter((variable) => !listed.has(variable))).toEqual([]);
  });

  it("gives PORT the manifest's port, and every other variable docs/configuration.md's default", () => {
    const listed = listedVariables(service);
    const page = defaultsFromPage();
    expect(listed.get('PORT')).toBe(`\`${services[service].port}\``);
    const differing = [...listed]
      .filter(([variable, fallback]) => variable !== 'PORT' && fallback !== page.get(variable))
      .map(([variable, fallback]) => `${variable}: ${fallback}, the page says ${page.get(variable) ?? 'nothing'}`);
    expect(differing).toEqual([]);
  });
});
