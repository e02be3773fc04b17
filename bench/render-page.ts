/** `npm run bench:report`: renders docs/performance.md from the committed results files. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pagePath, readResults, renderPerformancePage } from './performance-page.js';
import { repoRoot } from './server-process.js';

writeFileSync(join(repoRoot, pagePath), await renderPerformancePage(readResults(join(repoRoot, 'bench/results')), repoRoot));
process.stdout.write(`Rendered ${pagePath} from bench/results/*.json\n`);
