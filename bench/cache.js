// The bench's input files (a 1 GiB random file, a 4 GiB sparse one, a 200 MiB one) are made once and kept for the
// next run in .bench/ (ignored by git): making 1 GiB of random bytes takes longer than pushing it. `npm run bench`
// says what it keeps there; `npm run bench -- --clean` removes it.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const BENCH_CACHE = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', '.bench');

/** Bytes the cache holds on disk (a sparse file counts what it uses, not its length). */
export function cacheDiskBytes() {
  if (!fs.existsSync(BENCH_CACHE)) return 0;
  let total = 0;
  for (const name of fs.readdirSync(BENCH_CACHE)) {
    const stat = fs.statSync(path.join(BENCH_CACHE, name));
    total += stat.blocks * 512;
  }
  return total;
}

export function cleanCache() {
  fs.rmSync(BENCH_CACHE, { recursive: true, force: true });
}
