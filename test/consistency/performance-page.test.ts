import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { pagePath, readResults, renderPerformancePage } from '../../bench/performance-page.js';
import { readRepoFile } from './support/repo-files.js';

const repoRoot = fileURLToPath(new URL('../../', import.meta.url));

describe('docs/performance.md', () => {
  it('is exactly what `npm run bench:report` renders from bench/results/*.json (run it after a bench)', async () => {
    const rendered = await renderPerformancePage(readResults(`${repoRoot}bench/results`), repoRoot);
    expect(readRepoFile(pagePath)).toBe(rendered);
  });
});
