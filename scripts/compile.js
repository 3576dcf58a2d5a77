// `npm test`'s first step: compiles the CLI into dist/ (the end-to-end tests run it) and type-checks the tests,
// in two tsc processes at once rather than one after the other: each is single-threaded, and the pair takes the
// time of the longer (about 6 s here, against 10 s in turn).
import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const run = (project) => new Promise((resolve) => spawn(process.execPath, [tsc, '-p', project], { stdio: 'inherit' }).once('close', resolve));
const codes = await Promise.all([run('tsconfig.json'), run('tsconfig.test.json')]);
process.exitCode = codes.every((code) => code === 0) ? 0 : 1;
