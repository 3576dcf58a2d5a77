// Around the whole run: every temporary directory the tests make goes under one directory of this run, which is
// removed at the end. Each test file removes its own when it ends (setup.ts); whatever is still there at the end
// was left behind (a directory made while a file's tests were being collected, in a file whose tests then all
// were skipped, runs no hook that could remove it), and fails the run, named, so it is fixed rather than piling
// up in the system's temporary directory.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    /** Where tempDir() makes its directories during this run. */
    tempRoot: string;
  }
}

export default function setup(project: TestProject): () => void {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-test-run-'));
  project.provide('tempRoot', root);
  return () => {
    const left = fs.readdirSync(root);
    fs.rmSync(root, { recursive: true, force: true, maxRetries: 3 });
    // Filtering by test name skips files after their directories were made: nothing to report then.
    if (left.length === 0 || project.config.testNamePattern) return;
    process.exitCode = 1;
    throw new Error(`the tests left ${left.length} temporary director${left.length === 1 ? 'y' : 'ies'} behind: ${left.join(', ')}`);
  };
}
