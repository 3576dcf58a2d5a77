#!/usr/bin/env node
// CommonJS (bin/package.json), so that `--version` is answered before Node starts its ES module loader.
'use strict';
// A reader that goes away never crashes the process: main() decides what it means (a closed stdout before the
// result is written exits 141; a closed stderr only silences messages), and a late write after it is dropped.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

if (process.argv.length === 3 && process.argv[2] === '--version') {
  // The commonest probe, answered from package.json (as dist/version.js reads it) without loading the CLI.
  process.stdout.write(require('../package.json').version + '\n', (err) => {
    if (err) process.exitCode = 141;
  });
} else {
  import('../dist/cli.js').then(async ({ main }) => {
    process.exitCode = await main(process.argv);
  });
}
