import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Child-process tests run the compiled CLI; keep files isolated from each other.
    pool: 'forks',
  },
});
