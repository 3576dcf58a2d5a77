import fs from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { defineConfig } from 'vitest/config';
import type { TestProjectInlineConfiguration } from 'vitest/config';

// The suite in projects by what their files need, so that a run starts only what the files it runs need: a project's
// globalSetup runs only when one of its files is in the run. PostgreSQL (one embedded server, started in a couple of
// seconds) for the files that import test/helpers/postgres.ts, wherever they are; dist/ checked fresh (and compiled
// when not) for the end-to-end tests, which run bin/gamehost.js. Docker is asked for by the files that need it
// (test/helpers/docker.ts), nothing to start.
const ROOT = import.meta.dirname;
const testFiles = (dir: string): string[] =>
  fs
    .readdirSync(path.join(ROOT, dir), { recursive: true, encoding: 'utf8' })
    .filter((name) => name.endsWith('.test.ts'))
    .map((name) => path.posix.join(dir, name.split(path.sep).join('/')));
const importsPostgres = (file: string): boolean => /from '(\.\.\/)+helpers\/postgres\.js'/.test(fs.readFileSync(path.join(ROOT, file), 'utf8'));
const POSTGRES_FILES = [...testFiles('test/emulator'), ...testFiles('test/e2e')].filter(importsPostgres);

const DIST_FRESH = 'test/helpers/dist-fresh.ts';
const POSTGRES_SERVER = 'test/helpers/postgres-server.ts';

function project(name: string, include: string[], globalSetup: string[] = [], exclude: string[] = []): TestProjectInlineConfiguration {
  return {
    // src/help.cts too: Vite strips the types of .ts and .mts files only.
    oxc: { include: /\.(m?ts|cts|[jt]sx)$/ },
    test: {
      name,
      include,
      exclude,
      globalSetup,
      setupFiles: ['test/helpers/setup.ts'],
      testTimeout: 20_000,
      hookTimeout: 20_000,
      // Each file in a child process (forks), and the processes reused from one file to the next (isolate: false):
      // starting one and importing vitest and the CLI again for each file cost a quarter of the run's CPU. So a
      // test file must leave no state behind: process.env, listeners, fake timers (each one restores its own).
      pool: 'forks',
      isolate: false,
    },
  };
}

export default defineConfig({
  test: {
    // The run's temporary directories (every project's files get them through inject('tempRoot')).
    globalSetup: ['test/helpers/global-setup.ts'],
    projects: [
      project('unit', ['test/unit/**/*.test.ts']),
      project('emulator', ['test/emulator/**/*.test.ts'], [], POSTGRES_FILES),
      project('conformance', ['test/conformance/**/*.test.ts']),
      project('e2e', ['test/e2e/**/*.test.ts'], [DIST_FRESH], POSTGRES_FILES),
      // The files of test/emulator and test/e2e that need PostgreSQL; some of them run the bin too.
      project('postgres', POSTGRES_FILES, [POSTGRES_SERVER, DIST_FRESH]),
    ],
    // Vitest's default leaves one core free, which on a 2-core machine runs the files one at a time. Most files wait
    // on child processes, sockets and timers (a claim lapsing, a stall timeout), so three at once on 2 cores
    // overlap those waits; the CPU-bound ones then share the cores.
    maxWorkers: Math.max(3, availableParallelism() - 1),
  },
});
