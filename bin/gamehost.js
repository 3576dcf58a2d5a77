#!/usr/bin/env node
// CommonJS (bin/package.json): the commonest probes, `--version` and the top-level help, are answered before Node
// starts its ES-module loader, which alone can cost 1.4x a bare Node start; everything else runs dist/bundle/cli.js
// (or dist/cli.js, below).
'use strict';
// A reader that goes away never crashes the process: main() decides what it means (a closed stdout before the
// result is written exits 141; a closed stderr only silences messages), and a late write after it is dropped.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

const words = process.argv.slice(2);
let answer;
if (words.length === 1 && words[0] === '--version') {
  // From package.json, as dist/version.js reads it.
  answer = require('../package.json').version + '\n';
} else {
  const help = require('../dist/help.cjs');
  if (help.asksTopLevelHelp(words)) answer = help.topLevelHelp(process.stdout);
}
if (answer !== undefined) {
  // As main() ends: a reader gone away is 141, any other failure (a full disk) one line and 1.
  process.stdout.write(answer, (err) => {
    if (!err) return;
    const why = require('../dist/stdout-failure.cjs').stdoutFailure(err);
    process.exitCode = why === undefined ? 141 : 1;
    if (why !== undefined) process.stderr.write(`error: cannot write to stdout: ${why}\n`);
  });
} else {
  // Node 22.1+ keeps the modules it compiled in a cache on disk (os.tmpdir()/node-compile-cache, checked against
  // their contents), so the next command does not compile them again: 20-25 ms of an embedded command's 330 on
  // Node 24. NODE_DISABLE_COMPILE_CACHE=1 turns it off; Node 20 has no such cache.
  require('node:module').enableCompileCache?.();
  // The CLI as scripts/build.js bundles it (the emulator one chunk where dist/ has dozens of modules), unless tsc built
  // dist/ again since, or alone (the GitHub Action's build, scripts/action-setup.sh): then dist/ as tsc made it.
  const fs = require('node:fs');
  const built = (file) => fs.statSync(`${__dirname}/../dist/${file}`, { throwIfNoEntry: false })?.mtimeMs ?? -1;
  import(built('bundle/cli.js') >= built('cli.js') ? '../dist/bundle/cli.js' : '../dist/cli.js').then(async ({ main }) => {
    process.exitCode = await main(process.argv);
  });
}
