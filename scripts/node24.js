#!/usr/bin/env node
// Node.js 24 beside the machine's own, for the tests that run on both (scripts/test-node24.js): the registry's
// node-<platform>-<arch> package holds the binary, so it comes through npm like every other dependency, with no
// other download. Unpacked once into .cache/node-24/ (not committed; `rm -rf .cache/node-24` clears it); prints the
// binary's path. With a path already in GAMEHOST_NODE24, prints that.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import * as tar from 'tar';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
export const NODE24_DIR = path.join(ROOT, '.cache', 'node-24');
const binary = path.join(NODE24_DIR, 'bin', process.platform === 'win32' ? 'node.exe' : 'node');

/** The Node.js 24 binary to test with, if there is one (GAMEHOST_NODE24, or the one this script unpacked). */
export function node24Path() {
  const given = process.env.GAMEHOST_NODE24;
  if (given) return fs.existsSync(given) ? given : undefined;
  return fs.existsSync(binary) ? binary : undefined;
}

function prepare() {
  const found = node24Path();
  if (found) return found;
  const work = fs.mkdtempSync(path.join(os.tmpdir(), 'gamehost-node24-'));
  try {
    const spec = `node-${process.platform}-${process.arch}@24`;
    const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
    const file = execFileSync(npm, ['pack', '--silent', spec], { cwd: work, encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] })
      .trim()
      .split('\n')
      .at(-1);
    fs.mkdirSync(NODE24_DIR, { recursive: true });
    tar.x({ file: path.join(work, file), cwd: NODE24_DIR, strip: 1, sync: true });
  } finally {
    fs.rmSync(work, { recursive: true, force: true });
  }
  if (!fs.existsSync(binary)) throw new Error(`the package unpacked into ${NODE24_DIR} holds no ${binary}`);
  return binary;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  try {
    process.stdout.write(`${prepare()}\n`);
  } catch (err) {
    process.stderr.write(`error: could not prepare Node.js 24: ${err.message}\n`);
    process.exit(1);
  }
}
