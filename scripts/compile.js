// `npm test`'s first step: builds the CLI into dist/ (the end-to-end tests run it: scripts/build.js) and
// type-checks the tests, in two processes at once rather than one after the other: each is single-threaded, and the
// pair takes the time of the longer (about 6 s here, against 10 s in turn).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = (args) => new Promise((resolve) => spawn(process.execPath, args, { stdio: 'inherit' }).once('close', resolve));
const codes = await Promise.all([run(['scripts/build.js']), run([tsc, '-p', 'tsconfig.test.json'])]);
process.exitCode = codes.every((code) => code === 0) ? 0 : 1;
