#!/usr/bin/env node
// A reader that goes away never crashes the process: main() decides what it means (a closed stdout before the
// result is written exits 141; a closed stderr only silences messages), and a late write after it is dropped.
process.stdout.on('error', () => {});
process.stderr.on('error', () => {});

if (process.argv.length === 3 && process.argv[2] === '--version') {
  // The commonest probe, answered without loading the command tree.
  const { version } = await import('../dist/version.js');
  process.stdout.write(version + '\n', (err) => {
    if (err) process.exitCode = 141;
  });
} else {
  const { main } = await import('../dist/cli.js');
  process.exitCode = await main(process.argv);
}
