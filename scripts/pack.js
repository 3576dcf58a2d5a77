// `npm pack` and `npm publish` run this around packing (prepack, postpack). The package ships dist/, so an install
// from the registry or a tarball has nothing to build: the packed package.json leaves out `prepare`, which builds a
// git checkout on `npm ci` and which npm would otherwise list as an install script to approve (allowScripts), and
// the dev dependencies, which an `npm install` run in the installed package's directory (the way to add
// better-sqlite3 on Node.js 20 that the emulator names) would otherwise install too.
// prepack: build dist/, then take those out of package.json, keeping the file as it was beside it;
// postpack: put it back. A pack stopped in between is mended by the next prepack.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const MANIFEST = path.join(ROOT, 'package.json');
const KEPT = path.join(ROOT, 'package.json.packing');

function restore() {
  if (fs.existsSync(KEPT)) fs.renameSync(KEPT, MANIFEST);
}

function prepack() {
  restore();
  // GAMEHOST_PACK_SKIP_BUILD=1: dist/ is already built (the package test packs a copy after `npm test` built it).
  if (process.env.GAMEHOST_PACK_SKIP_BUILD !== '1') {
    execFileSync(process.execPath, [path.join(ROOT, 'scripts', 'build.js')], { cwd: ROOT, stdio: 'inherit' });
  }
  const text = fs.readFileSync(MANIFEST, 'utf8');
  const manifest = JSON.parse(text);
  delete manifest.scripts.prepare;
  delete manifest.devDependencies;
  fs.copyFileSync(MANIFEST, KEPT);
  const tmp = `${MANIFEST}.tmp`;
  fs.writeFileSync(tmp, `${JSON.stringify(manifest, null, 2)}\n`);
  fs.renameSync(tmp, MANIFEST);
}

const step = process.argv[2];
if (step === 'prepack') prepack();
else if (step === 'postpack') restore();
else {
  process.stderr.write('usage: node scripts/pack.js prepack|postpack\n');
  process.exit(2);
}
