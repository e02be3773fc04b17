import { defineConfig } from 'vitest/config';

/**
 * The arm64 file alone (npm run test:arm64): slow under emulation, so CI runs it as a step of its
 * own, timed. It prepares its engine and stand-ins itself, without the container stage's builds.
 */
export default defineConfig({
  test: {
    include: ['test/containers/arm64.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 1_200_000,
  },
});
