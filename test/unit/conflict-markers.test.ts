// A merge's conflict markers left in a file: in bench/run.js they made `npm run bench` a syntax error that no test
// loaded, so it went unseen. Every text file of the project's own folders is looked at.
import fs from 'node:fs';
import path from 'node:path';
import { expect, it } from 'vitest';

const ROOT = path.resolve(__dirname, '../..');
const FOLDERS = ['src', 'test', 'bench', 'scripts', 'docs', 'bin', 'examples', '.ci', '.github'];
const MARKER = /^(<{7}|>{7})( |$)|^={7}$/m;

function files(dir: string): string[] {
  if (!fs.existsSync(dir)) return [];
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === '__snapshots__' ? [] : files(p);
    return /\.(ts|js|mjs|cjs|json|md|sh|ya?ml|txt)$|^run$/.test(e.name) ? [p] : [];
  });
}

it('no file holds a merge conflict marker', () => {
  const all = [...FOLDERS.flatMap((f) => files(path.join(ROOT, f))), path.join(ROOT, 'README.md'), path.join(ROOT, 'package.json')];
  expect(all.length).toBeGreaterThan(100);
  const marked = all.filter((f) => f !== __filename && MARKER.test(fs.readFileSync(f, 'utf8'))).map((f) => path.relative(ROOT, f));
  expect(marked).toEqual([]);
});
