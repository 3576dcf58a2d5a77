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
    // Each file in a child process (forks), and the processes reused from one file to the next (isolate: false):
    // starting one and importing vitest and the CLI again for each of the 68 files cost a quarter of the run's CPU.
    // So a test file must leave no state behind: process.env, listeners, fake timers (each one restores its own).
    pool: 'forks',
    isolate: false,
    // Vitest's default leaves one core free, which on a 2-core machine runs the files one at a time. Most files wait
    // on child processes, sockets and timers (a claim lapsing, a stall timeout), so three at once on 2 cores
    // overlap those waits; the CPU-bound ones then share the cores.
    maxWorkers: Math.max(3, availableParallelism() - 1),
  },
});
