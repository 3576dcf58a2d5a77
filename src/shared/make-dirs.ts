// `mkdir -p`, one level at a time. Node's recursive mkdir tries a level again for good when the file system answers
// ENOENT for a directory whose parent exists (procfs: `--data-dir /proc/x`), synchronously, so the process stops
// answering even SIGTERM; here that ENOENT is the answer.
import { mkdirSync, statSync } from 'node:fs';
import path from 'node:path';

/** Makes `dir` and whatever of its parents is missing, each with `mode`; throws what the file system says. */
export function makeDirsSync(dir: string, mode = 0o700): void {
  const missing: string[] = [];
  for (let at = path.resolve(dir); ; ) {
    try {
      // A file where a directory should be: mkdir says so (EEXIST, or ENOTDIR for what is below it).
      if (!statSync(at).isDirectory()) mkdirSync(at, { mode });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      missing.push(at);
      const parent = path.dirname(at);
      if (parent === at) break;
      at = parent;
    }
  }
  for (const level of missing.reverse()) {
    try {
      mkdirSync(level, { mode });
    } catch (err) {
      // Made meanwhile by another process: as good.
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}
