// The package as a user gets it: `npm pack` (its prepack and postpack for real, on a copy of what it reads), the
// tarball installed with `npm ci --offline` into an empty directory, every dependency from npm's cache (the
// lockfile's production entries, so no registry is asked), and the installed `gamehost` run as a separate process.
// It also runs under Node.js 24 (scripts/test-node24.js), where the embedded emulator needs nothing compiled.
import { spawnSync, type SpawnSyncReturns } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { packAndInstall } from '../../scripts/install-packed.js';
import { hasNodeSqlite } from '../../src/emulator/stores/sqlite-driver.js';
import { isolatedEnv, tempDir } from '../helpers/cli.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const manifest = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
  license: string;
  files: string[];
};
const NODE_SQLITE = hasNodeSqlite();

/** Relative links in a markdown file that point at files (not URLs, not anchors in the same file). */
function fileLinks(markdown: string): string[] {
  return [...markdown.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1]!.split('#')[0]!).filter((l) => l !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(l));
}

let packed: { files: { path: string }[]; filename: string };
let installed: string;
let bin: string;
let install: SpawnSyncReturns<string>;
// Why the install could not be tried here (npm's cache lacks a dependency: `npm ci` with the network fills it).
let cannot: string | undefined;

beforeAll(() => {
  const r = packAndInstall(tempDir());
  packed = r.packed;
  // postpack put package.json back as it was.
  expect(r.manifestAfter).toBe(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
  if (r.cacheMiss) {
    cannot = `npm's cache lacks a dependency (run \`npm ci\` with the network once): ${r.cacheMiss}`;
    if (process.env.CI) throw new Error(cannot);
    console.warn(`package test skipped: ${cannot}`);
    return;
  }
  ({ install, installed, bin } = r);
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
    expect(pkg.devDependencies).toBeUndefined();
    expect(pkg.peerDependencies).toEqual({ 'better-sqlite3': expect.any(String) });
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

  // Up to five processes one after another, npm among them (about 6 s alone): at a load of 17 it outlasted 20 s.
  it(`lobby create and build push on the embedded emulator${NODE_SQLITE ? ', on node:sqlite' : ', once better-sqlite3 is installed'}`, { timeout: 60_000 }, ({ skip }) => {
    if (cannot) skip(cannot);
    const env = isolatedEnv();
    if (!NODE_SQLITE) {
      // Node.js 20: better-sqlite3 is an optional peer dependency; without it, one line says what to run.
      const without = gamehost(['lobby', 'create', '--game-mode', 'default', '--json'], env);
      expect(without.status).toBe(1);
      expect(without.stderr.split('\n')[0]).toBe('error: the local emulator needs better-sqlite3, which is not installed (Node.js 20 only: 22.13 and later have node:sqlite)');
      const fix = 'npm install --no-save --save-prod better-sqlite3@12 --foreground-scripts';
      expect(without.stderr).toContain(`run \`${fix}\` in ${installed} `);
      // What npm would do with that command there, asked without the network (--dry-run --offline: the registry's
      // answer for better-sqlite3 must be in npm's cache, else this part is skipped with a line): it adds
      // better-sqlite3. (On a global install, `npm install better-sqlite3 --no-save`,
      // the command said before, is "up to date" with npm 11 and adds nothing: seen by hand, see docs/emulator.md.)
      const dry = (args: string[]) =>
        spawnSync('npm', [...args, '--dry-run', '--offline'], { cwd: installed, env: { ...process.env, PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH}` }, encoding: 'utf8' });
      const planned = dry(fix.split(' ').slice(1));
      if (/ENOTCACHED/.test(planned.stderr)) console.warn('the better-sqlite3 install was not dry-run: its registry answer is not in npm\'s cache');
      else {
        expect(planned.status, planned.stderr).toBe(0);
        expect(planned.stdout).toMatch(/^add better-sqlite3 12\.\d+\.\d+$/m);
      }
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
    const push = gamehost(['build', 'push', image, '--tag', 'game:v1', '--json'], { ...env, GITHUB_ACTIONS: 'true', GITHUB_OUTPUT: out, GAMEHOST_ENDPOINT: 'embedded' });
    expect(push.status, push.stderr).toBe(0);
    const pushed = JSON.parse(push.stdout);
    expect(pushed.bytes).toBe(3 * 1024 * 1024);
    expect(fs.readFileSync(out, 'utf8')).toContain(`build_id=${pushed.build_id}\n`);
    const list = gamehost(['emulator', 'builds', '--json'], env);
    expect(list.status, list.stderr).toBe(0);
    expect(list.stdout).toContain(pushed.build_id);
  });
});
