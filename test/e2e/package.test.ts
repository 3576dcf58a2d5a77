// The package as a user gets it: `npm pack` (its prepack and postpack for real, on a copy of what it reads), the
// tarball installed with `npm ci --offline` into an empty directory, every dependency from npm's cache (the
// lockfile's production entries, so no registry is asked), and the installed `gamehost` run as a separate process.
// It also runs under Node.js 24 (scripts/test-node24.js), where the embedded emulator needs nothing compiled.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, tempDir } from '../helpers/cli.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  files: string[];
};
const NODE_SQLITE = Number(process.versions.node.split('.')[0]) >= 23 || /^22\.(1[3-9]|[2-9]\d)\./.test(process.versions.node);
// npm from the Node.js that runs the tests, so a Node.js 24 run installs with Node.js 24.
const npmEnv = (extra: NodeJS.ProcessEnv = {}) => ({
  ...process.env,
  PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`,
  npm_config_update_notifier: 'false',
  npm_config_fund: 'false',
  npm_config_audit: 'false',
  ...extra,
});

function npm(args: string[], cwd: string, extra: NodeJS.ProcessEnv = {}): SpawnSyncReturns<string> {
  return spawnSync(NPM, args, { cwd, env: npmEnv(extra), encoding: 'utf8' });
}

/** Relative links in a markdown file that point at files (not URLs, not anchors in the same file). */
function fileLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!.split('#')[0]!).filter((l) => l !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(l));
}

let work: string;
let packed: { files: { path: string }[]; filename: string };
let installed: string;
let bin: string;
let install: SpawnSyncReturns<string>;
// Why the install could not be tried here (npm's cache lacks a dependency: `npm ci` with the network fills it).
let cannot: string | undefined;

beforeAll(() => {
  work = tempDir();
  // Pack a copy of what `npm pack` reads, so its prepack (which edits package.json for the moment) never touches
  // the working tree other tests read; dist/ is the one `npm test` just built.
  const copy = path.join(work, 'source');
  for (const entry of ['package.json', 'README.md', 'LICENSE', 'bin', 'dist', 'docs', 'scripts']) {
    fs.cpSync(path.join(ROOT, entry), path.join(copy, entry), { recursive: true });
  }
  const pack = npm(['pack', '--json', '--pack-destination', work], copy, { GAMEHOST_PACK_SKIP_BUILD: '1' });
  expect(pack.status, pack.stderr).toBe(0);
  packed = (JSON.parse(pack.stdout) as (typeof packed)[])[0]!;
  expect(fs.readFileSync(path.join(copy, 'package.json'), 'utf8')).toBe(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));

  // An empty project whose lockfile is the repository's production entries plus the tarball: `npm ci` installs
  // exactly those from the cache (`--offline`: a miss fails instead of asking the registry).
  const app = path.join(work, 'app');
  fs.mkdirSync(app);
  const lock = JSON.parse(fs.readFileSync(path.join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { dev?: boolean; [k: string]: unknown }>;
  };
  const tarball = `file:../${packed.filename}`;
  const pkg = JSON.parse(fs.readFileSync(path.join(copy, 'package.json'), 'utf8'));
  const packages: Record<string, unknown> = {
    '': { name: 'app', dependencies: { [manifest.name]: tarball } },
    [`node_modules/${manifest.name}`]: {
      version: manifest.version,
      resolved: tarball,
      license: pkg.license,
      dependencies: pkg.dependencies,
      peerDependencies: pkg.peerDependencies,
      peerDependenciesMeta: pkg.peerDependenciesMeta,
      engines: pkg.engines,
      bin: pkg.bin,
    },
  };
  for (const [key, entry] of Object.entries(lock.packages)) if (key !== '' && !entry.dev) packages[key] = entry;
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'app', private: true, dependencies: { [manifest.name]: tarball } }));
  fs.writeFileSync(path.join(app, 'package-lock.json'), JSON.stringify({ name: 'app', lockfileVersion: 3, requires: true, packages }));
  install = npm(['ci', '--offline', '--foreground-scripts'], app);
  if (install.status !== 0 && /ENOTCACHED/.test(install.stderr)) {
    cannot = `npm's cache lacks a dependency (run \`npm ci\` with the network once): ${install.stderr.split('\n').find((l) => /ENOTCACHED/.test(l) && /request/.test(l)) ?? ''}`;
    if (process.env.CI) throw new Error(cannot);
    console.warn(`package test skipped: ${cannot}`);
    return;
  }
  expect(install.status, install.stderr).toBe(0);
  installed = path.join(app, 'node_modules', manifest.name);
  bin = path.join(app, 'node_modules', '.bin', 'gamehost');
}, 180_000);

function gamehost(args: string[], env: NodeJS.ProcessEnv): SpawnSyncReturns<string> {
  // The installed bin as a shell finds it, on the Node.js of this run.
  return spawnSync(bin, args, { env: { PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}`, ...env }, encoding: 'utf8' });
}

describe(`the packed package, installed (Node.js ${process.versions.node})`, () => {
  it('ships the CLI, its docs and LICENSE, and no sources, tests or build tools', ({ skip }) => {
    if (cannot) skip(cannot);
    const files = packed.files.map((f) => f.path).sort();
    for (const must of ['LICENSE', 'README.md', 'package.json', 'bin/gamehost.js', 'dist/cli.js', 'docs/commands.md']) expect(files).toContain(must);
    expect(files.filter((f) => !/^(bin|dist|docs)\//.test(f))).toEqual(['LICENSE', 'README.md', 'package.json']);
    expect(fs.readFileSync(path.join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    expect(manifest.license).toBe('MIT');
  });

  it('the installed package.json has every field a registry page shows, and no install script', ({ skip }) => {
    if (cannot) skip(cannot);
    const pkg = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
    expect(pkg.repository.url).toMatch(/^git\+https:\/\/github\.com\/[^/]+\/gamehost\.git$/);
    expect(pkg.homepage).toMatch(/^https:\/\//);
    expect(pkg.bugs.url).toMatch(/^https:\/\//);
    expect(pkg.keywords).toEqual(expect.arrayContaining(['game-server', 'multiplayer', 'matchmaking']));
    expect(pkg.engines.node).toBe('^20.18.1 || >=22.13.0');
    for (const script of ['preinstall', 'install', 'postinstall', 'prepare']) expect(pkg.scripts?.[script]).toBeUndefined();
    // npm asks for approval of nothing, and compiled nothing.
    expect(install.stdout + install.stderr).not.toMatch(/install-scripts|allowScripts|gyp/);
    expect(fs.existsSync(path.join(installed, '..', 'better-sqlite3'))).toBe(false);
  });

  it('every file the README, the docs and package.json refer to is in the package', ({ skip }) => {
    if (cannot) skip(cannot);
    const pkg = JSON.parse(fs.readFileSync(path.join(installed, 'package.json'), 'utf8'));
    const referred = [...Object.values(pkg.bin as Record<string, string>)];
    const docs = ['README.md', ...fs.readdirSync(path.join(installed, 'docs')).map((f) => `docs/${f}`)];
    for (const doc of docs) {
      const links = fileLinks(fs.readFileSync(path.join(installed, doc), 'utf8'));
      referred.push(...links.map((l) => path.posix.join(path.posix.dirname(doc), l)));
    }
    expect(referred.length).toBeGreaterThan(10);
    expect(referred.filter((f) => !fs.existsSync(path.join(installed, f)))).toEqual([]);
    // What the entry point loads: every relative import of the compiled CLI resolves inside the package.
    const missing: string[] = [];
    for (const file of fs.readdirSync(path.join(installed, 'dist'), { recursive: true }) as string[]) {
      if (!file.endsWith('.js')) continue;
      // Code only: a comment may show an import as an example.
      const text = fs
        .readFileSync(path.join(installed, 'dist', file), 'utf8')
        .split('\n')
        .filter((line) => !/^\s*(\/\/|\/\*|\*)/.test(line))
        .join('\n');
      for (const [, spec] of text.matchAll(/(?:from |import\()['"](\.{1,2}\/[^'"]+)['"]/g)) {
        if (!fs.existsSync(path.join(installed, 'dist', path.dirname(file), spec!))) missing.push(`${file} -> ${spec}`);
      }
    }
    expect(missing).toEqual([]);
  });

  it('gamehost --help and --version', ({ skip }) => {
    if (cannot) skip(cannot);
    const env = isolatedEnv();
    const help = gamehost(['--help'], env);
    expect(help.status).toBe(0);
    expect(help.stdout).toMatch(/^Usage: gamehost \[options\] \[command\]\n/);
    expect(help.stderr).toBe('');
    const version = gamehost(['--version'], env);
    expect(version.status).toBe(0);
    expect(version.stdout.trim()).toBe(manifest.version);
  });

  it(`lobby create and build push on the embedded emulator${NODE_SQLITE ? ', on node:sqlite' : ', once better-sqlite3 is installed'}`, ({ skip }) => {
    if (cannot) skip(cannot);
    const env = isolatedEnv();
    if (!NODE_SQLITE) {
      // Node.js 20: better-sqlite3 is an optional peer dependency; without it, one line says what to run.
      const without = gamehost(['lobby', 'create', '--game-mode', 'default', '--json'], env);
      expect(without.status).toBe(1);
      expect(without.stderr.split('\n')[0]).toBe('error: the local emulator needs better-sqlite3, which is not installed (Node.js 20 only: 22.13 and later have node:sqlite)');
      expect(without.stderr).toContain(`run \`npm install better-sqlite3 --no-save --foreground-scripts\` in ${installed} `);
      // What that install gives (it builds natively, so needs the network): the checkout's built copy, linked.
      for (const dep of ['better-sqlite3', 'bindings', 'file-uri-to-path']) {
        fs.symlinkSync(path.join(ROOT, 'node_modules', dep), path.join(installed, '..', dep), 'junction');
      }
    }
    const lobby = gamehost(['lobby', 'create', '--game-mode', 'default', '--json'], env);
    expect(lobby.stderr).not.toMatch(/ExperimentalWarning|warning/i);
    expect(lobby.status, lobby.stderr).toBe(0);
    expect(JSON.parse(lobby.stdout).lobby.region.region_id).toBe('lnd-atl');

    const image = path.join(tempDir(), 'server.tar');
    fs.writeFileSync(image, Buffer.alloc(3 * 1024 * 1024, 7));
    const out = path.join(tempDir(), 'github-output');
    const push = gamehost(['build', 'push', image, '--tag', 'game:v1', '--json'], { ...env, GITHUB_ACTIONS: 'true', GITHUB_OUTPUT: out });
    expect(push.status, push.stderr).toBe(0);
    const pushed = JSON.parse(push.stdout);
    expect(pushed.bytes).toBe(3 * 1024 * 1024);
    expect(fs.readFileSync(out, 'utf8')).toContain(`build_id=${pushed.build_id}\n`);
    const list = gamehost(['emulator', 'builds', '--json'], env);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(pushed.build_id);
  });
});
