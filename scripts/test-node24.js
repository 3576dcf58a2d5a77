// `npm test`'s second part: what depends on Node.js's version, again under Node.js 24: the SQLite driver (node:sqlite
// there, better-sqlite3 on 20) under the store contract, the metrics collector (pidusage and pidtree reading the
// process tree), the idle collection (it calls V8's gc with an option Node 20's V8 does not know), the installed
// package, and one end-to-end pass through each command group with the real bin. PostgreSQL is left out
// (GAMEHOST_TEST_POSTGRES=off): nothing of it depends on Node's version, and the first part ran it. The binary is the
// one scripts/node24.js prepared (.ci/run does it first) or GAMEHOST_NODE24. Without it: skipped with a line saying
// so, or, with CI set, a failure. Run on Node.js 24 already (the whole suite was just that), nothing to add.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { node24Path } from './node24.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NODE24_FILES = [
  'test/emulator/store-contract.test.ts',
  'test/emulator/runtime-process.test.ts',
  'test/emulator/collect.test.ts',
  'test/e2e/package.test.ts',
  'test/e2e/command-groups-bin.test.ts',
];

const major = Number(process.versions.node.split('.')[0]);
if (major >= 24) {
  process.stdout.write(`Node.js ${process.versions.node} ran the whole suite; no second run.\n`);
  process.exit(0);
}
const node = node24Path();
if (node === undefined) {
  const why = 'Node.js 24 is not prepared: `node scripts/node24.js` unpacks it from the registry into .cache/node-24 (or set GAMEHOST_NODE24)';
  const ci = process.env.CI !== undefined && process.env.CI !== '' && process.env.CI !== '0' && process.env.CI !== 'false';
  process.stderr.write(ci ? `error: ${why}\n` : `skipped the Node.js 24 run: ${why}\n`);
  process.exit(ci ? 1 : 0);
}
const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
process.stdout.write(`\nWhat depends on Node.js's version again, on Node.js ${version} (${node}):\n`);
const vitest = path.join(ROOT, 'node_modules', 'vitest', 'vitest.mjs');
const run = spawnSync(node, [vitest, 'run', ...NODE24_FILES, ...process.argv.slice(2)], {
  cwd: ROOT,
  stdio: 'inherit',
  env: { ...process.env, GAMEHOST_TEST_POSTGRES: 'off' },
});
process.exit(run.status ?? 1);
