import { defineConfig } from 'vitest/config';

/**
 * The Podman file alone (npm run test:podman): it starts or finds Podman and builds its own images
 * there, so it needs none of the container stage's global setup, which builds on the Docker engine.
 */
export default defineConfig({
  test: {
    include: ['test/containers/podman.test.ts'],
    fileParallelism: false,
    testTimeout: 120_000,
    hookTimeout: 300_000,
  },
});
