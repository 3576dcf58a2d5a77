// `npm test`'s first step: builds the CLI into dist/ (the end-to-end tests run it: scripts/build.js) and
// type-checks the tests, in two processes at once rather than one after the other (4.0 s here, against 5.2 s in turn,
// with TypeScript 7; 16 s with TypeScript 5.9).
import { spawn } from 'node:child_process';
import { TSC } from './build.js';

const run = (args) => new Promise((resolve) => spawn(process.execPath, args, { stdio: 'inherit' }).once('close', resolve));
const codes = await Promise.all([run(['scripts/build.js']), run([TSC, '-p', 'tsconfig.test.json'])]);
process.exitCode = codes.every((code) => code === 0) ? 0 : 1;
