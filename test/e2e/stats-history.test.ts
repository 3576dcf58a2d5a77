import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, plain, runCli, tempDir } from '../helpers/cli.js';
import { endpointEnv, startTestEmulator, stopLobby } from '../helpers/emulator.js';
import { parseCsv } from '../../src/output/csv.js';

const COLUMNS = 'lobby_id,namespace_id,namespace_name,region_id,region_name,tier_name,version_id,version_name,lobby_group_id,lobby_group_name,start_ts,stop_ts,total_uptime_ms,query_uptime_ms';

describe('stats and history against one emulator', () => {
  let emu: Awaited<ReturnType<typeof startTestEmulator>>;
  let env: Record<string, string | undefined>;
  const lobbies: string[] = [];

  beforeAll(async () => {
    emu = await startTestEmulator();
    env = { ...isolatedEnv(), ...endpointEnv(emu) };
    const plan: [string, string][] = [['default', 'lnd-atl'], ['default', 'lnd-atl'], ['default', 'lnd-fra'], ['duos', 'lnd-sgp']];
    for (const [mode, region] of plan) {
      const r = await runCli(['lobby', 'create', '--game-mode', mode, '--region', region, '--json'], { env });
      expect(r.code).toBe(0);
      lobbies.push(JSON.parse(r.stdout).lobby.lobby_id);
    }
  });
  afterAll(() => emu.close());

  it('stats --json counts the players of running lobbies per mode and region', async () => {
    const r = await runCli(['stats', '--json'], { env });
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.player_count).toBe(4);
    expect(s.game_modes.default.player_count).toBe(3);
    expect(s.game_modes.default.regions['lnd-atl'].player_count).toBe(2);
    expect(s.game_modes.duos.regions['lnd-sgp'].player_count).toBe(1);
  });

  it('stats piped: one tab-separated row per mode and region, busiest first', async () => {
    const r = await runCli(['stats'], { env });
    const rows = r.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows.filter((row) => row[2] !== '0')).toEqual([
      ['default', 'lnd-atl', '2'],
      ['default', 'lnd-fra', '1'],
      ['duos', 'lnd-sgp', '1'],
    ]);
  });

  it('stats in a terminal: the total and a table', async () => {
    const r = await runCli(['stats'], { env, tty: true });
    const text = plain(r.stdout);
    expect(text).toContain('Players in game: 4');
    expect(text).toMatch(/default\s+lnd-atl\s+2\s+67%/);
    expect(text).not.toMatch(/squads/);
    expect(r.stdout).toContain('\x1b[1m');
  });

  it('history export writes the CSV with the service columns and reports the rows', async () => {
    await stopLobby(emu.endpoint, lobbies[0]!, { exit_code: 1, failed: true });
    const dir = tempDir();
    const out = path.join(dir, 'h.csv');
    const r = await runCli(['history', 'export', '--since', '1h', '-o', out, '--json'], { env, cwd: dir });
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ output: out, rows: 4 });
    expect(summary.query_end - summary.query_start).toBe(3_600_000);
    expect(summary.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const rows = parseCsv(fs.readFileSync(out, 'utf8'));
    expect(rows[0]!.join(',')).toBe(COLUMNS);
    expect(rows.slice(1).map((r) => r[0]).sort()).toEqual([...lobbies].sort());
    const stopped = rows.find((r) => r[0] === lobbies[0])!;
    expect(stopped[11]).toMatch(/^\d+$/);
    expect(fs.readdirSync(dir)).toEqual(['h.csv']);
  });

  it('-o - streams the CSV to stdout; the default name follows the window', async () => {
    const piped = await runCli(['history', 'export', '--since', '1h', '-o', '-'], { env });
    expect(piped.code).toBe(0);
    expect(piped.stdout.split('\n')[0]).toBe(COLUMNS);

    const dir = tempDir();
    const r = await runCli(['history', 'export', '--from', '2026-01-01T00:00:00Z', '--to', '2026-01-02T00:00:00Z'], { env, cwd: dir });
    expect(r.code).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(['lobby-history-20260101T000000Z-20260102T000000Z.csv']);
    expect(r.stderr).toContain('Wrote 0 lobbies');
  });

  it.each([
    [['--from', '2026-01-02T00:00:00Z', '--to', '2026-01-01T00:00:00Z'], /--from must be before --to/],
    [['--since', '1h', '--from', '2026-01-01'], /either --since or --from/],
    [[], /a window is required/],
    [['--since', 'yesterday'], /--since must be a duration/],
    [['--from', 'last tuesday'], /--from must be an RFC 3339 time/],
    [['--since', '1h', '-o', '/nonexistent-dir/x.csv'], /directory \/nonexistent-dir does not exist/],
    [['--since', '1h', '-o', '-', '--json'], /--json prints a summary/],
  ])('refuses %j with exit 2', async (args, message) => {
    const r = await runCli(['history', 'export', ...(args as string[])], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});

describe('stats on an empty emulator', () => {
  it('says so', async () => {
    const r = await runCli(['stats'], { env: isolatedEnv({ NO_COLOR: '1' }), tty: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Players in game: 0\nNo game mode has players yet.\n');
  });
});
