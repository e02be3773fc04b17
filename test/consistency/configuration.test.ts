import { serviceNames, type ServiceName } from '@sample-services/manifest';
import { tracingWanted } from '@sample-services/telemetry/wanted';
import { describe, expect, it } from 'vitest';
import { variablesOfService, variablesReadBy } from './support/config-readers.js';
import { tableWithHeader } from './support/markdown.js';
import { readRepoFile } from './support/repo-files.js';

/** Variable -> the services that read it, in manifest order. */
type Readers = Record<string, ServiceName[]>;

async function readersFromCode(): Promise<Readers> {
  const readers: Readers = {};
  for (const service of serviceNames) {
    for (const variable of await variablesOfService(service)) (readers[variable] ??= []).push(service);
  }
  return readers;
}

/** docs/configuration.md's tables as variable -> services; `all` is every manifest service. */
function readersFromPage(): Readers {
  const page = readRepoFile('docs/configuration.md');
  const table = tableWithHeader(page, ['Variable', 'Services', 'Default', 'Meaning']);
  const readers: Readers = {};
  for (const [variable = '', listed = ''] of table.rows) {
    const named = [...listed.matchAll(/`([^`]+)`/g)].map((m) => m[1] as ServiceName);
    const services = listed === 'all' ? serviceNames : serviceNames.filter((s) => named.includes(s));
    expect(
      named.filter((s) => !serviceNames.includes(s)),
      `${variable}: services not in the manifest`,
    ).toEqual([]);
    readers[variable.replaceAll('`', '')] = services;
  }
  return readers;
}

describe("docs/configuration.md's table", () => {
  it('lists exactly the variables the config readers read, each for exactly the services that read it', async () => {
    expect(readersFromPage()).toEqual(await readersFromCode());
  });

  it('has the OTEL_* variables in a table of their own, with every one the preload decides by', () => {
    const page = readRepoFile('docs/configuration.md');
    const listed = tableWithHeader(page, ['Tracing variable', 'Default', 'Meaning']).rows.map(([variable = '']) =>
      variable.replaceAll('`', ''),
    );
    expect(listed.every((variable) => variable.startsWith('OTEL_'))).toBe(true);
    expect(listed).toEqual(expect.arrayContaining(variablesReadBy(tracingWanted)));
  });
});
