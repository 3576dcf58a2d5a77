// The emulator's own commands say which emulator they look at: a game made with `emulator game create --env` is
// the one `emulator builds` lists, and a data directory that holds no emulator says so.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareDataDir } from '../../src/emulator/datadir.js';
import { SCHEMA_VERSION } from '../../src/emulator/stores/migrations.js';
import { SqliteStore } from '../../src/emulator/stores/sqlite.js';
import { openDatabase } from '../../src/emulator/stores/sqlite-driver.js';
import { runBin } from '../helpers/bin.js';
import { isolatedEnv, readCsv, runCli, tempDir } from '../helpers/cli.js';

/** The variables `eval "$(gamehost emulator game create --env)"` sets. */
function evalEnv(text: string): Record<string, string> {
  return Object.fromEntries([...text.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!.replace(/^'|'$/g, '')]));
}

describe('emulator builds lists the game it is pointed at', () => {
  it('after eval "$(gamehost emulator game create --env)" and a push, the new build is listed (GAMEHOST_GAME and --game)', async () => {
    const env = isolatedEnv();
    const created = await runCli(['emulator', 'game', 'create', '--env'], { env });
    expect(created.code).toBe(0);
    const game = evalEnv(created.stdout);
    expect(game.GAMEHOST_GAME).toMatch(/^[0-9a-f-]{36}$/);
    const withGame = { ...env, ...game };
    const file = path.join(tempDir(), 'a.tar');
    fs.writeFileSync(file, crypto.randomBytes(1000));
    const pushed = await runCli(['build', 'push', file, '--tag', 'a:1', '-q'], { env: withGame });
    expect(pushed.code).toBe(0);
    const buildId = pushed.stdout.trim();

    const listed = await runCli(['emulator', 'builds', '-q'], { env: withGame });
    expect([listed.code, listed.stdout]).toEqual([0, `${buildId}\n`]);
    const flag = await runCli(['emulator', 'builds', '-q', '--game', game.GAMEHOST_GAME!], { env });
    expect([flag.code, flag.stdout]).toEqual([0, `${buildId}\n`]);
    // The seeded game has none of them.
    const seeded = await runCli(['emulator', 'builds', '-q'], { env });
    expect([seeded.code, seeded.stdout]).toEqual([0, '']);
    // A game the emulator does not know is said, not listed as empty.
    const unknown = await runCli(['emulator', 'builds', '--game', '12345678-1234-4234-8234-123456789abc'], { env: withGame });
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/^error: Game 12345678-1234-4234-8234-123456789abc not found/);
  });
});

describe('a data directory without emulator data', () => {
  const cases = [['emulator', 'builds'], ['emulator', 'game', 'list'], ['emulator', 'lobby', 'stop', '12345678-1234-4234-8234-123456789abc'], ['emulator', 'game', 'delete', '12345678-1234-4234-8234-123456789abc']];
  for (const args of cases) {
    it(`${args.slice(0, 3).join(' ')} --data-dir <mistyped>: one line, exit 2`, async () => {
      const env = isolatedEnv();
      const missing = path.join(tempDir(), 'nonexistent');
      const r = await runCli([...args, '--data-dir', missing], { env });
      expect(r.code).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`error: --data-dir: no emulator data in ${missing}\n  check the path; the embedded emulator keeps its data in ${path.join(env.XDG_DATA_HOME!, 'gamehost', 'emulator')}\n`);
    });
  }

  // A file named as the data directory: reset once ended in a crash report (ENOTDIR from its scan), serve in
  // "EEXIST: file already exists, mkdir", exit 1.
  for (const args of [...cases, ['emulator', 'reset', '--yes'], ['emulator', 'serve', '--port', '0']]) {
    it(`${args.slice(0, 3).join(' ')} --data-dir <a file, or a path under one>: one line, exit 2`, async () => {
      const file = path.join(tempDir(), 'server.tar');
      fs.writeFileSync(file, 'not a directory');
      for (const dir of [file, path.join(file, 'data')]) {
        const r = await runCli([...args, '--data-dir', dir], { env: isolatedEnv() });
        expect([r.code, r.stdout, r.stderr]).toEqual([2, '', `error: --data-dir: ${dir} is not a directory\n`]);
      }
      expect(fs.readFileSync(file, 'utf8')).toBe('not a directory');
    });
  }

  it('emulator reset --data-dir <nothing there>: nothing to delete, exit 0 (a CI job resets before its first run)', async () => {
    const missing = path.join(tempDir(), 'nonexistent');
    const r = await runCli(['emulator', 'reset', '--yes', '--data-dir', missing], { env: isolatedEnv() });
    expect([r.code, r.stdout, r.stderr]).toEqual([0, '', `No emulator data in ${missing}; nothing to delete.\n`]);
    expect(fs.existsSync(missing)).toBe(false);
  });

  it('the default directory before first use: a notice, an empty list, exit 0; nothing under -q or --json', async () => {
    const env = isolatedEnv();
    const dir = path.join(env.XDG_DATA_HOME!, 'gamehost', 'emulator');
    const r = await runCli(['emulator', 'builds'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe(`No emulator data in ${dir} yet: the embedded emulator makes it on first use.\n`);
    const q = await runCli(['emulator', 'builds', '-q'], { env });
    expect([q.code, q.stdout, q.stderr]).toEqual([0, '', '']);
    const json = await runCli(['emulator', 'builds', '--json'], { env });
    expect([json.code, JSON.parse(json.stdout), json.stderr]).toEqual([0, { builds: [] }, '']);
    expect(fs.existsSync(dir)).toBe(false);
  });
});

describe('a data directory a newer gamehost migrated', () => {
  it('emulator serve and an embedded command: one line, exit 1, and not a byte of it changed', async () => {
    const paths = prepareDataDir(tempDir());
    await SqliteStore.open(paths.db).close();
    const db = openDatabase(paths.db, { timeout: 5000 });
    db.exec(`UPDATE meta SET value = '${SCHEMA_VERSION + 1}' WHERE key = 'schema_version'`);
    db.close();
    const bytes = () => fs.readFileSync(paths.db).toString('base64');
    const before = bytes();
    const line = `error: the emulator database ${paths.db} has schema version ${SCHEMA_VERSION + 1}, newer than this gamehost knows (${SCHEMA_VERSION}); upgrade gamehost, or give it another data directory\n`;
    const serve = await runBin(['emulator', 'serve', '--port', '0', '--data-dir', paths.root]);
    expect([serve.code, serve.stdout, serve.stderr]).toEqual([1, '', line]);
    const embedded = await runBin(['emulator', 'game', 'create', '--data-dir', paths.root]);
    expect([embedded.code, embedded.stdout, embedded.stderr]).toEqual([1, '', line]);
    expect(bytes()).toBe(before);
  });
});

describe('emulator lobby stop shows the lobby as lobby logs does', () => {
  it('the region by name on a terminal and piped, in a game of its own too', async () => {
    const env = isolatedEnv();
    const game = evalEnv((await runCli(['emulator', 'game', 'create', '--env'], { env })).stdout);
    for (const e of [env, { ...env, ...game }]) {
      const lobby = (await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env: e })).stdout.trim();
      const logs = await runCli(['lobby', 'logs', lobby], { env: e });
      const regionLines = (text: string) => text.split('\n').filter((l) => /^region/.test(l));
      const stop = await runCli(['emulator', 'lobby', 'stop', lobby], { env: e });
      expect(stop.code).toBe(0);
      expect(regionLines(stop.stdout)).toEqual(regionLines(logs.stdout));
      expect(regionLines(stop.stdout)).toContainEqual('region\tlnd-atl');
      const lobby2 = (await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env: e })).stdout.trim();
      const tty = await runCli(['emulator', 'lobby', 'stop', lobby2, '--no-color'], { env: e, tty: true });
      expect(tty.stdout).toMatch(/^Region\s+Atlanta \(lnd-atl\)$/m);
      expect(tty.stdout).not.toMatch(/[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}/);
    }
  });
});

describe('hints that say what is true', () => {
  it("deleting the seeded game, and a deleted game's token, do not send the user to gamehost login", async () => {
    const env = isolatedEnv();
    expect((await runCli(['stats', '-q'], { env })).code).toBe(0);
    const seeded = (await runCli(['emulator', 'game', 'list', '-q'], { env })).stdout.trim();
    const refused = await runCli(['emulator', 'game', 'delete', seeded], { env });
    expect(refused.code).toBe(3);
    expect(refused.stderr).not.toContain('gamehost login');
    expect(refused.stderr.trimEnd().split('\n').at(-1)).toBe('  the seeded game cannot be deleted; games made with `gamehost emulator game create` can');

    const game = evalEnv((await runCli(['emulator', 'game', 'create', '--env'], { env })).stdout);
    expect((await runCli(['emulator', 'game', 'delete', game.GAMEHOST_GAME!], { env })).code).toBe(0);
    const gone = await runCli(['stats'], { env: { ...env, ...game } });
    expect(gone.code).toBe(3);
    expect(gone.stderr).not.toContain('gamehost login');
    expect(gone.stderr.trimEnd().split('\n').at(-1)).toBe('  this game was deleted or has expired: make a new one with `gamehost emulator game create`');
  });
});

describe('history export --game-mode and --region', () => {
  it('keep the lobbies of the modes and regions named (name or id), in every format; the summary counts those', async () => {
    const env = isolatedEnv();
    const made: Record<string, string> = {};
    for (const [mode, region] of [['default', 'lnd-atl'], ['duos', 'lnd-fra'], ['duos', 'lnd-atl'], ['squads', 'lnd-fra']]) {
      const r = await runCli(['lobby', 'create', '--game-mode', mode!, '--region', region!, '-q'], { env });
      expect(r.code).toBe(0);
      made[r.stdout.trim()] = `${mode} ${region}`;
    }
    const dir = tempDir();
    const csv = await runCli(['history', 'export', '--since', '1h', '--game-mode', 'duos', '--region', 'LND-FRA', '-o', 'f.csv'], { env, cwd: dir });
    expect(csv.code).toBe(0);
    const rows = readCsv(fs.readFileSync(path.join(dir, 'f.csv'), 'utf8'));
    expect(rows[0]![0]).toBe('lobby_id');
    expect(rows.slice(1).map((r) => made[r[0]!])).toEqual(['duos lnd-fra']);
    expect(csv.stderr).toContain('Wrote 1 lobby (');

    const json = await runCli(['history', 'export', '--since', '1h', '--game-mode', 'duos', '--game-mode', 'squads', '--format', 'json', '-o', '-'], { env });
    expect(json.stdout.trim().split('\n').map((l) => made[JSON.parse(l).lobby_id]).sort()).toEqual(['duos lnd-atl', 'duos lnd-fra', 'squads lnd-fra']);

    // A region by its id, as the CSV's region_id column has it.
    const regionId = rows[1]![3]!;
    const byId = await runCli(['history', 'export', '--since', '1h', '--region', regionId, '--format', 'json', '-o', '-'], { env });
    expect(byId.stdout.trim().split('\n').map((l) => made[JSON.parse(l).lobby_id]).sort()).toEqual(['duos lnd-fra', 'squads lnd-fra']);

    // A value that names no lobby of the window is said, with the names they have: a typo is not an empty window.
    const none = await runCli(['history', 'export', '--since', '1h', '--game-mode', 'nope', '--game-mode', 'duos', '-o', '-'], { env });
    expect([none.code, readCsv(none.stdout).length]).toEqual([0, 3]);
    expect(none.stderr).toContain('warning: --game-mode nope names none of the 4 lobbies of this window (theirs: default, duos, squads)\n');
    expect(none.stderr).not.toContain('--game-mode duos names none');
    const url = await runCli(['history', 'export', '--since', '1h', '--region', 'lnd-fra', '--url-only'], { env });
    expect([url.code, url.stderr]).toEqual([2, 'error: --url-only downloads nothing, so there is nothing to filter: drop --game-mode and --region\n']);
  });
});

describe('emulator builds delete', () => {
  it('deletes builds one by one, records and bytes; an unknown one is said and exits 4; emulator builds still lists', async () => {
    const env = isolatedEnv();
    const dir = tempDir();
    const ids: string[] = [];
    for (const tag of ['a:1', 'a:2']) {
      const file = path.join(dir, 'a.tar');
      fs.writeFileSync(file, crypto.randomBytes(1000));
      ids.push((await runCli(['build', 'push', file, '--tag', tag, '-q'], { env })).stdout.trim());
    }
    const data = path.join(env.XDG_DATA_HOME!, 'gamehost', 'emulator');
    expect(fs.readdirSync(path.join(data, 'builds')).sort()).toEqual([...ids].sort());
    const unknown = '12345678-1234-4234-8234-123456789abc';
    const r = await runCli(['emulator', 'builds', 'delete', ids[0]!, unknown], { env });
    expect(r.code).toBe(4);
    expect(r.stderr).toBe(`Deleted build ${ids[0]}.\nwarning: no build ${unknown} in this emulator\n`);
    expect(fs.readdirSync(path.join(data, 'builds'))).toEqual([ids[1]]);
    expect((await runCli(['emulator', 'builds', '-q'], { env })).stdout).toBe(`${ids[1]}\n`);
    expect((await runCli(['emulator', 'builds', 'list', '-q'], { env })).stdout).toBe(`${ids[1]}\n`);
    const json = await runCli(['emulator', 'builds', 'delete', ids[1]!, '--json'], { env });
    expect([json.code, JSON.parse(json.stdout)]).toEqual([0, { deleted: [ids[1]], not_found: [] }]);
  });
});
