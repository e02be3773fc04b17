import { readdirSync } from 'node:fs';
import { serviceNames } from '@sample-services/manifest';
import { describe, expect, it } from 'vitest';
import { readRepoFile } from './support/repo-files.js';

/**
 * The shared suites each service's own tests call with its own app: so that no test here keeps a list of
 * the services' apps, and a new service is checked by its folder alone (docs/architecture.md, "Adding a service").
 */
const sharedSuites = ['openApiContract(', 'commonContract('];

describe.each(serviceNames)('services/%s/test', (service) => {
  it('calls the shared suites: its OpenAPI document, and what every service answers', () => {
    const tests = readdirSync(new URL(`../../services/${service}/test/`, import.meta.url))
      .filter((file) => file.endsWith('.test.ts'))
      .map((file) => readRepoFile(`services/${service}/test/${file}`))
      .join('\n');
    expect(sharedSuites.filter((suite) => !tests.includes(suite))).toEqual([]);
  });
});
