// What `npm run build` (scripts/build.js) makes of Kysely: one module in dist/, in place of a re-export of the
// package's 280, which each process that opens a store would load; and of the CLI, dist/bundle/, which the bin runs
// unless tsc built dist/ after it or alone.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';

const BUNDLE = path.resolve(import.meta.dirname, '../../dist/emulator/stores/kysely.js');

describe('dist/emulator/stores/kysely.js', () => {
  it('is Kysely in one module: it imports nothing, and exports what the stores take from it', async () => {
    const text = fs.readFileSync(BUNDLE, 'utf8');
    expect(text).not.toMatch(/^\s*(import|export)\s[^;]*\bfrom\s*['"]/m);
    // (Its FileMigrationProvider imports the files a caller names; nothing here calls it.)
    expect(text).not.toMatch(/\b(import|require)\s*\(\s*['"]/);
    const kysely = (await import(pathToFileURL(BUNDLE).href)) as Record<string, unknown>;
    for (const name of ['Kysely', 'DummyDriver', 'sql', 'SqliteAdapter', 'SqliteQueryCompiler', 'PostgresAdapter', 'PostgresQueryCompiler', 'IdentifierNode', 'TableNode']) {
      expect(kysely[name], name).toBeDefined();
    }
  });
});

describe('dist/bundle/', () => {
  const ROOT = path.resolve(import.meta.dirname, '../..');

  it('holds every module of dist/ that cli.js reaches, each in one chunk, the emulator in a chunk of its own', () => {
    const chunks = JSON.parse(fs.readFileSync(path.join(ROOT, 'dist/bundle/modules.json'), 'utf8')) as Record<string, string[]>;
    const all = Object.values(chunks).flat();
    expect(all.length).toBe(new Set(all).size);
    for (const module of ['cli.js', 'commands/program.js', 'api/agents.js', 'emulator/index.js', 'emulator/serving.js', 'emulator/stores/kysely.js', 'commands/lobby/logs.js']) expect(all, module).toContain(module);
    const emulator = Object.entries(chunks).find(([, modules]) => modules.includes('emulator/index.js'))!;
    expect(emulator[1]).toEqual(expect.arrayContaining(['emulator/routes/server.js', 'emulator/services/matchmaking.js']));
    // What finding a serve takes stays out of it: a command beside a serve loads none of the emulator's store.
    expect(emulator[1]).not.toContain('emulator/serving.js');
    for (const file of Object.keys(chunks)) expect(fs.existsSync(path.join(ROOT, 'dist/bundle', file)), file).toBe(true);
  });

  /** A package of the real bin and help, whose dist/cli.js and dist/bundle/cli.js each print which it is. */
  function fakePackage(files: { tsc: number; bundle?: number }): string {
    const root = tempDir();
    fs.cpSync(path.join(ROOT, 'bin'), path.join(root, 'bin'), { recursive: true });
    fs.mkdirSync(path.join(root, 'dist', 'bundle'), { recursive: true });
    fs.copyFileSync(path.join(ROOT, 'dist/help.cjs'), path.join(root, 'dist/help.cjs'));
    const write = (file: string, said: string, mtime: number) => {
      fs.writeFileSync(file, `export async function main() { process.stdout.write(${JSON.stringify(said)}); return 0; }\n`);
      fs.utimesSync(file, mtime, mtime);
    };
    write(path.join(root, 'dist/cli.js'), 'dist/cli.js', files.tsc);
    if (files.bundle !== undefined) write(path.join(root, 'dist/bundle/cli.js'), 'dist/bundle/cli.js', files.bundle);
    return root;
  }
  const ran = (root: string) => spawnSync(process.execPath, [path.join(root, 'bin/gamehost.js'), 'lobby', 'list'], { encoding: 'utf8' }).stdout;

  it('the bin runs the bundle when it is as new as dist/, and dist/ as tsc made it when tsc built it since or alone', () => {
    expect(ran(fakePackage({ tsc: 1_000_000, bundle: 1_000_010 }))).toBe('dist/bundle/cli.js');
    expect(ran(fakePackage({ tsc: 1_000_010, bundle: 1_000_000 }))).toBe('dist/cli.js');
    expect(ran(fakePackage({ tsc: 1_000_000 }))).toBe('dist/cli.js');
  });
});
