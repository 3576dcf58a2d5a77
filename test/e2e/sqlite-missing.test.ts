// better-sqlite3 is optional: an install that skipped its build (--ignore-scripts, pnpm) or left it out must not
// crash a command on the embedded emulator. The module's loading is replaced to fail as it does in those installs;
// opening the store and turning the failure into one line are the real code.
import fs from 'node:fs';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { setSqliteLoader } from '../../src/emulator/stores/sqlite-driver.js';
import { isolatedEnv, runCli } from '../helpers/cli.js';

afterEach(() => setSqliteLoader());

const ROOT = path.resolve(import.meta.dirname, '../..');

/** What better-sqlite3 does when its native part was never built: the constructor fails to find the binding. */
class Unbuilt {
  constructor() {
    throw new Error('Could not locate the bindings file. Tried:\n → /x/build/better_sqlite3.node\n → /x/build/Debug/better_sqlite3.node');
  }
}

describe('without a usable better-sqlite3', () => {
  it.each([
    ['not built', () => Unbuilt as never, /native part is not built/, 'npm rebuild better-sqlite3 --foreground-scripts'],
    [
      'not installed',
      () => {
        throw Object.assign(new Error("Cannot find module 'better-sqlite3'"), { code: 'MODULE_NOT_FOUND' });
      },
      /which is not installed \(Node\.js 20 only: 22\.13 and later have node:sqlite\)/,
      'npm install --no-save --save-prod better-sqlite3@12 --foreground-scripts',
    ],
  ])('%s: one line with the two ways out, exit 1, no crash report', async (_name, loader, message, fix) => {
    setSqliteLoader(loader);
    const env = isolatedEnv();
    for (const args of [['stats'], ['lobby', 'create', '--game-mode', 'default']]) {
      const r = await runCli(args, { env });
      expect(r.code).toBe(1);
      const lines = r.stderr.trim().split('\n');
      expect(lines.at(-2)).toMatch(/^error: the local emulator needs better-sqlite3, /);
      expect(lines.at(-2)).toMatch(message);
      // The command that works in that state (each tried in a clone), run in the package's own directory.
      expect(lines.at(-1)).toBe(`  run \`${fix}\` in ${ROOT} (it shows the build's errors, if any), or use a real service with --endpoint <url>`);
      expect(r.stderr).not.toMatch(/unexpected failure|Tried:|report/);
      expect(fs.existsSync(path.join(env.XDG_STATE_HOME!, 'gamehost', 'crash'))).toBe(false);
    }
  });

  it('a real service needs no SQLite at all', async () => {
    setSqliteLoader(() => Unbuilt as never);
    const r = await runCli(['stats', '--endpoint', 'http://127.0.0.1:9', '--namespace-token', 't'], { env: isolatedEnv(), retry: { attempts: 1, baseMs: 1, maxMs: 1 } });
    // Refused (nothing listens on port 9), but not the SQLite error: the emulator was never opened.
    expect(r.code).toBe(6);
    expect(r.stderr).not.toMatch(/sqlite/i);
  });
});
