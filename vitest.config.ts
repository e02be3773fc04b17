import { availableParallelism } from 'node:os';
import { configDefaults, defineConfig } from 'vitest/config';
import containers from './test/containers/vitest.config.js';

/**
 * Package tests that start PostgreSQL or a child process: they run with the end-to-end tests,
 * not with the unit tests, which stay in-process (inject, or a listener on port 0) and fast.
 */
const e2eInPackages = ['packages/users/test/postgres-*.test.ts', 'packages/kit/test/run-service.test.ts'];

export default defineConfig({
  test: {
    testTimeout: 20_000,
    hookTimeout: 60_000,
    // Vitest's default is one worker less than the CPUs: one on a 2-core machine, where the end-to-end
    // files spend most of their time waiting on the processes they start. Two at least, side by side.
    maxWorkers: Math.max(2, availableParallelism() - 1),
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          // Each file builds its own apps and stores, so files may share a worker's loaded modules:
          // without a fresh module graph per file the project runs in about 6 s instead of 21 s on 2 cores.
          isolate: false,
          include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/consistency/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...e2eInPackages],
        },
      },
      {
        extends: true,
        test: {
          name: 'e2e',
          include: ['test/e2e/**/*.test.ts', 'test/browser/**/*.test.ts', ...e2eInPackages],
          // A bound for a hung test, not a speed check: two files at once on a loaded 2-core machine
          // made a 7 s test that starts a stack of processes take 24 s.
          testTimeout: 60_000,
        },
      },
      // Real images and containers on a Docker engine, with that stage's own settings (npm run test:containers).
      { test: { ...containers.test, name: 'containers' } },
    ],
  },
});
