import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['packages/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // The container stage needs a Docker engine and runs on its own: npm run test:containers.
    exclude: ['**/node_modules/**', 'test/containers/**'],
    testTimeout: 20_000,
    hookTimeout: 60_000,
  },
});
