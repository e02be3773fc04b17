import { defineConfig } from 'vitest/config';

/** npm run test:first-run: the README's commands on a fresh copy with the machine's own (old) Node. */
export default defineConfig({
  test: {
    include: ['test/first-run/**/*.test.ts'],
    testTimeout: 600_000,
    hookTimeout: 60_000,
  },
});
