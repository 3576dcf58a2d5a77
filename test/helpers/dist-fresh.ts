// vitest globalSetup of the projects whose tests run bin/gamehost.js (vitest.config.ts): the bin runs dist/, while
// in-process tests import src/, so a run after an edit of src/ would test the old code on the spawned paths without
// a word. Before those tests start, every src/ file is checked against what tsc made of it (dist/ beside it, newer)
// and against the bundle made of that (dist/bundle/, which the bin runs); when one is newer or has none, dist/ is
// compiled and bundled again (what `npm run build` does), with one line saying so.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

/**
 * The first src/ file that dist/ does not reflect (newer than its .js or .cjs, or without one, or newer than the
 * bundle the bin runs, dist/bundle/, made from dist/ after it), relative to the root.
 */
export function staleSource(root = ROOT): string | undefined {
  const src = path.join(root, 'src');
  const mtime = (file: string) => {
    try {
      return fs.statSync(file).mtimeMs;
    } catch {
      return -Infinity;
    }
  };
  const bundledAt = mtime(path.join(root, 'dist', 'bundle', 'modules.json'));
  for (const entry of fs.readdirSync(src, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile() || !/\.c?ts$/.test(entry.name) || entry.name.endsWith('.d.ts')) continue;
    const file = path.join(entry.parentPath, entry.name);
    const built = path.join(root, 'dist', path.relative(src, file)).replace(/\.(c?)ts$/, '.$1js');
    if (fs.statSync(file).mtimeMs > Math.min(mtime(built), bundledAt)) return path.relative(root, file);
  }
  return undefined;
}

export default function setup(): void {
  const stale = staleSource();
  if (stale === undefined) return;
  process.stdout.write(`dist/ is older than ${stale}: compiling src/ into dist/ (npm run build) for the tests that run bin/gamehost.js\n`);
  const run = spawnSync(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], { cwd: ROOT, encoding: 'utf8' });
  if (run.status !== 0) {
    const first = `${run.stdout}${run.stderr}`.split('\n').find((line) => line.trim() !== '') ?? `tsc exited ${run.status}`;
    throw new Error(`dist/ is stale and compiling it failed (npm run build shows all): ${first}`);
  }
}
