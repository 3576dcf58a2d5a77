#!/usr/bin/env node
// A reader that goes away (`gamehost stats | head -1`) is not an error.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err) => {
    if (err.code === 'EPIPE') process.exit(process.exitCode ?? 0);
    throw err;
  });
}

if (process.argv.length === 3 && process.argv[2] === '--version') {
  // The commonest probe, answered without loading the command tree.
  const { version } = await import('../dist/version.js');
  process.stdout.write(version + '\n');
} else {
  const { main } = await import('../dist/cli.js');
  process.exitCode = await main(process.argv);
}
