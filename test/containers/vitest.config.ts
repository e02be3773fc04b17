import { defineConfig } from 'vitest/config';

/**
 * The container stage (npm run test:containers): real images, containers and compose stacks
 * on a Docker engine. Files run one at a time: they share the engine and the 2 CPUs.
 */
export default defineConfig({
  test: {
    include: ['test/containers/**/*.test.ts'],
    // Its own step (npm run test:arm64, vitest.arm64.config.ts): emulated builds are slow.
    exclude: ['test/containers/arm64.test.ts'],
    globalSetup: ['test/containers/global-setup.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
});
