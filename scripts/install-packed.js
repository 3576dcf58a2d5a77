// The package as a user gets it, for test/e2e/package.test.ts and bench/installed.js: `npm pack` of a copy of what
// it reads (its prepack and postpack run for real there, never in the working tree), and the tarball installed
// with `npm ci --offline` into an empty directory whose lockfile is the repository's production entries plus the
// tarball, so every dependency comes from npm's cache and no registry is asked. npm from the Node.js running this.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';

function npm(args, cwd, extra = {}) {
  const env = {
    ...process.env,
    PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
    npm_config_update_notifier: 'false',
    npm_config_fund: 'false',
    npm_config_audit: 'false',
    ...extra,
  };
  return spawnSync(NPM, args, { cwd, env, encoding: 'utf8' });
}

/** Packs into `work` (dist/ as built: GAMEHOST_PACK_SKIP_BUILD) and installs into work/app. A cache miss is
 * { cacheMiss } rather than a throw: `npm ci` with the network fills the cache. */
export function packAndInstall(work) {
  const copy = path.join(work, 'source');
  for (const entry of ['package.json', 'README.md', 'LICENSE', 'bin', 'dist', 'docs', 'scripts']) {
    fs.cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  }
  const pack = npm(['pack', '--json', '--pack-destination', work], copy, { GAMEHOST_PACK_SKIP_BUILD: '1' });
  if (pack.status !== 0) throw new Error(`npm pack failed: ${pack.stderr}`);
  const packed = JSON.parse(pack.stdout)[0];
  const manifest = JSON.parse(fs.readFileSync(path.join(copy, 'package.json'), 'utf8'));
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8'));
  const app = path.join(work, 'app');
  fs.mkdirSync(app);
  const tarball = `file:../${packed.filename}`;
  const packages = {
    '': { name: 'app', dependencies: { [manifest.name]: tarball } },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: tarball,
      license: manifest.license,
      dependencies: manifest.dependencies,
      peerDependencies: manifest.peerDependencies,
      peerDependenciesMeta: manifest.peerDependenciesMeta,
      engines: manifest.engines,
      bin: manifest.bin,
    },
  };
  for (const [key, entry] of Object.entries(lock.packages)) if (key !== '' && !entry.dev) packages[key] = entry;
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, dependencies: { [manifest.name]: tarball } }));
  fs.writeFileSync(path.join(app, 'package-lock.json'), JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages }));
  const install = npm(['ci', '--offline', '--foreground-scripts'], app);
  const result = {
    packed,
    /** package.json of the copy after packing, byte for byte (postpack restored it). */
    manifestAfter: fs.readFileSync(path.join(copy, 'package.json'), 'utf8'),
    install,
    installed: path.join(app, 'node_modules', manifest.name),
    bin: path.join(app, 'node_modules', '.bin', 'gamehost'),
  };
  if (install.status !== 0 && /ENOTCACHED/.test(install.stderr)) {
    result.cacheMiss = install.stderr.split('\n').find((l) => /ENOTCACHED|only-if-cached/.test(l)) ?? 'ENOTCACHED';
  } else if (install.status !== 0) {
    throw new Error(`npm ci of the packed package failed: ${install.stderr}`);
  }
  return result;
}
