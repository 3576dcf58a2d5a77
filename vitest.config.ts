import { availableParallelism } from 'node:os';
import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    setupFiles: ['test/helpers/setup.ts'],
    // The run's temporary directories, and one PostgreSQL server for the whole run (each file that needs it makes
    // its own database there).
    globalSetup: ['test/helpers/global-setup.ts', 'test/helpers/postgres-server.ts'],
    testTimeout: 20_000,
    hookTimeout: 20_000,
    // Child-process tests run the compiled CLI; keep files isolated from each other.
    pool: 'forks',
    // Vitest's default leaves one core free, which on a 2-core machine runs the files one at a time; most of them
    // wait on child processes and sockets, so two at once roughly halve the run there.
    maxWorkers: Math.max(2, availableParallelism() - 1),
  },
});
