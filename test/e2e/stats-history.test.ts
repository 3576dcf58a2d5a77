import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, plain, readCsv, runCli, tempDir } from '../helpers/cli.js';
import { admit, stopLobby, useEmulator } from '../helpers/emulator.js';

const COLUMNS = 'lobby_id,namespace_id,namespace_name,region_id,region_name,tier_name,version_id,version_name,lobby_group_id,lobby_group_name,start_ts,stop_ts,total_uptime_ms,query_uptime_ms';

describe('stats and history against one emulator', () => {
  const fx = useEmulator();
  const lobbies: string[] = [];

  beforeAll(async () => {
    const plan: [string, string][] = [['default', 'lnd-atl'], ['default', 'lnd-atl'], ['default', 'lnd-fra'], ['duos', 'lnd-sgp']];
    for (const [mode, region] of plan) {
      const r = await runCli(['lobby', 'create', '--game-mode', mode, '--region', region, '--json'], { env: fx.env });
      expect(r.code).toBe(0);
      // The lobby's server admits the player its client was given: the statistics count connected players.
      await admit(fx.emu.endpoint, JSON.parse(r.stdout));
      lobbies.push(JSON.parse(r.stdout).lobby.lobby_id);
    }
  });

  it('stats --json counts the connected players of running lobbies per mode and region', async () => {
    const r = await runCli(['stats', '--json'], { env: fx.env });
    expect(r.code).toBe(0);
    const s = JSON.parse(r.stdout);
    expect(s.player_count).toBe(4);
    expect(s.game_modes.default.player_count).toBe(3);
    expect(s.game_modes.default.regions['lnd-atl'].player_count).toBe(2);
    expect(s.game_modes.duos.regions['lnd-sgp'].player_count).toBe(1);
  });

  it('stats piped: one tab-separated row per mode and region, busiest first', async () => {
    const r = await runCli(['stats'], { env: fx.env });
    const rows = r.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows.filter((row) => row[2] !== '0')).toEqual([
      ['default', 'lnd-atl', '2'],
      ['default', 'lnd-fra', '1'],
      ['duos', 'lnd-sgp', '1'],
    ]);
  });

  it('stats in a terminal: the total and a table', async () => {
    const r = await runCli(['stats'], { env: fx.env, tty: true });
    const text = plain(r.stdout);
    expect(text).toContain('Players in game: 4');
    // A table per game mode: default's lnd-atl has 2 of its 3 players, drawn as a bar and a share.
    expect(text).toMatch(/^default {2}3 players \(75% of all\)\n {2}REGION +PLAYERS +SHARE\n {2}lnd-atl +2 +█+\S* +67%\n/m);
    expect(text).not.toMatch(/squads/);
    expect(r.stdout).toContain('\x1b[1m');
  });

  it('history export writes the CSV with the service columns and reports the rows', async () => {
    await stopLobby(fx.emu.endpoint, lobbies[0]!, { exit_code: 1, failed: true });
    const dir = tempDir();
    const out = path.join(dir, 'h.csv');
    const r = await runCli(['history', 'export', '--since', '1h', '-o', out, '--json'], { env: fx.env, cwd: dir });
    expect(r.code).toBe(0);
    const summary = JSON.parse(r.stdout);
    expect(summary).toMatchObject({ output: out, rows: 4 });
    expect(summary.query_end - summary.query_start).toBe(3_600_000);
    expect(summary.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\//);
    const rows = readCsv(fs.readFileSync(out, 'utf8'));
    expect(rows[0]!.join(',')).toBe(COLUMNS);
    expect(rows.slice(1).map((r) => r[0]).sort()).toEqual([...lobbies].sort());
    const stopped = rows.find((r) => r[0] === lobbies[0])!;
    expect(stopped[11]).toMatch(/^\d+$/);
    expect(fs.readdirSync(dir)).toEqual(['h.csv']);
  });

  it('-o - streams the CSV to stdout; the default name follows the window', async () => {
    const piped = await runCli(['history', 'export', '--since', '1h', '-o', '-'], { env: fx.env });
    expect(piped.code).toBe(0);
    expect(piped.stdout.split('\n')[0]).toBe(COLUMNS);

    const dir = tempDir();
    const r = await runCli(['history', 'export', '--from', '2026-01-01T00:00:00Z', '--to', '2026-01-02T00:00:00Z'], { env: fx.env, cwd: dir });
    expect(r.code).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(['lobby-history-20260101T000000Z-20260102T000000Z.csv']);
    expect(r.stderr).toContain('Wrote 0 lobbies');
  });

  it('-o . and -o out/: a directory gets the file named after the window inside it, written there', async () => {
    const root = tempDir();
    const work = path.join(root, 'work');
    fs.mkdirSync(path.join(work, 'out'), { recursive: true });
    const window = ['--from', '2026-01-01T00:00:00Z', '--to', '2026-01-02T00:00:00Z'];
    const name = 'lobby-history-20260101T000000Z-20260102T000000Z.csv';
    for (const [output, dir] of [['.', work], ['out/', path.join(work, 'out')], [work, work]] as const) {
      fs.rmSync(path.join(dir, name), { force: true });
      const r = await runCli(['history', 'export', ...window, '-o', output, '-q'], { env: fx.env, cwd: work });
      expect([r.code, r.stdout, r.stderr]).toEqual([0, path.join(dir, name) + '\n', '']);
      expect(fs.readdirSync(dir).filter((f) => f !== 'out')).toEqual([name]);
    }
    // Nothing was written beside the directory, and the temporary file did not outlive the run.
    expect(fs.readdirSync(root)).toEqual(['work']);
    // A trailing slash names a directory: one that does not exist is made, not taken as a file name.
    const made = await runCli(['history', 'export', ...window, '-o', 'new/', '-q'], { env: fx.env, cwd: work });
    expect([made.code, made.stdout, made.stderr]).toEqual([0, path.join(work, 'new', name) + '\n', '']);
  });

  it('after a download, tells on stderr what the export holds: lobbies, lobby-hours, where', async () => {
    await stopLobby(fx.emu.endpoint, lobbies[0]!, { exit_code: 1, failed: true });
    const dir = tempDir();
    const r = await runCli(['history', 'export', '--since', '1h', '-o', 'h.csv'], { env: fx.env, cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    const lines = r.stderr.split('\n');
    expect(lines).toContainEqual(expect.stringMatching(/^Wrote 4 lobbies \([\d.]+ KiB\) to h\.csv$/));
    expect(lines).toContainEqual(expect.stringMatching(/^Window +\d{4}-\d{2}-\d{2}T\S+Z → \d{4}-\d{2}-\d{2}T\S+Z \(1h 00m\)$/));
    expect(lines).toContainEqual('Lobbies       4: 1 stopped, 3 still running');
    expect(lines).toContainEqual(expect.stringMatching(/^Lobby-hours +\S+ h in the window, \S+ h in total$/));
    expect(lines).toContainEqual(expect.stringMatching(/^Regions +lnd-atl \S+ h \(2 lobbies\) · lnd-\w+ \S+ h \(1\) · lnd-\w+ \S+ h \(1\)$/));
    expect(lines).toContainEqual(expect.stringMatching(/^Game modes +default \S+ h \(3 lobbies\) · duos \S+ h \(1\)$/));
    expect(lines).toContainEqual('Failed stops  unknown: the export has no exit codes (see `lobby logs <id>`)');
  });

  it('--json carries the same summary for scripts', async () => {
    const dir = tempDir();
    const r = await runCli(['history', 'export', '--since', '1h', '-o', 'h.csv', '--json'], { env: fx.env, cwd: dir });
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ rows: 4, format: 'csv', summary: { lobbies: 4, running: 3, stopped: 1 } });
    expect(doc.summary.regions[0]).toMatchObject({ name: 'lnd-atl', lobbies: 2 });
    expect(doc.summary.game_modes.map((g: { name: string }) => g.name).sort()).toEqual(['default', 'duos']);
    expect(doc.summary.query_uptime_ms).toBeGreaterThan(0);
  });

  it('--format json -o -: one JSON object per row, numbers as numbers', async () => {
    const r = await runCli(['history', 'export', '--since', '1h', '--format', 'json', '-o', '-'], { env: fx.env });
    expect(r.code).toBe(0);
    const rows = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(rows.map((row) => row.lobby_id).sort()).toEqual([...lobbies].sort());
    const running = rows.find((row) => row.lobby_id === lobbies[1])!;
    expect(typeof running.start_ts).toBe('number');
    expect(running.stop_ts).toBeNull();
    expect(typeof running.query_uptime_ms).toBe('number');
    expect(running.start_time).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(typeof rows.find((row) => row.lobby_id === lobbies[0])!.stop_ts).toBe('number');
    expect(r.stderr).toContain('Lobbies       4:');
  });

  it('--format json to a file: JSON lines under a .jsonl name, written atomically', async () => {
    const dir = tempDir();
    const r = await runCli(['history', 'export', '--from', '2026-01-01T00:00:00Z', '--to', '2099-01-01T00:00:00Z', '--format', 'json'], { env: fx.env, cwd: dir });
    expect(r.code).toBe(0);
    expect(fs.readdirSync(dir)).toEqual(['lobby-history-20260101T000000Z-20990101T000000Z.jsonl']);
    const text = fs.readFileSync(path.join(dir, fs.readdirSync(dir)[0]!), 'utf8');
    expect(text.trim().split('\n').map((l) => JSON.parse(l).region_name).sort()).toEqual(['lnd-atl', 'lnd-atl', 'lnd-fra', 'lnd-sgp']);
  });

  it('--format table in an 80-column terminal: rows that fit, never wrapped, ids whole', async () => {
    const r = await runCli(['history', 'export', '--since', '1h', '--format', 'table', '--utc'], { env: { ...fx.env, NO_COLOR: '1' }, tty: true, columns: 80 });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^LOBBY +GAME MODE +REGION +STOPPED +UPTIME$/);
    expect(lines.slice(1, -2)).toHaveLength(4);
    expect(lines.find((l) => l.startsWith(lobbies[1]!))).toMatch(/^[0-9a-f-]{36} +default +lnd-atl +running +\S.*$/);
    expect(lines.at(-2)).toBe('STARTED, IN WINDOW left out to fit: --wide shows them');
    expect(lines.at(-1)).toBe('4 lobbies · times in UTC');
    for (const line of lines) expect([...line].length).toBeLessThanOrEqual(79);
    expect(r.stderr).toContain('Lobbies       4:');
  });

  it('--format table piped: tab-separated rows with RFC 3339 times and milliseconds', async () => {
    const r = await runCli(['history', 'export', '--since', '1h', '--format', 'table'], { env: fx.env });
    const rows = r.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows).toHaveLength(4);
    const stopped = rows.find((row) => row[0] === lobbies[0])!;
    expect(stopped.slice(1, 3)).toEqual(['default', 'lnd-atl']);
    expect(stopped[3]).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
    expect(stopped[4]).toMatch(/Z$/);
    expect(stopped[5]).toMatch(/^\d+$/);
    expect(rows.find((row) => row[0] === lobbies[1])![4]).toBe('-');
  });

  it('an empty history window: the summary and the table say so', async () => {
    const window = ['--from', '2020-01-01T00:00:00Z', '--to', '2020-01-02T00:00:00Z', '--utc'];
    const r = await runCli(['history', 'export', ...window, '--format', 'table'], { env: { ...fx.env, NO_COLOR: '1' }, tty: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('No lobbies ran in this window.\n');
    expect(r.stderr).toContain('Window   2020-01-01 00:00:00 UTC → 2020-01-02 00:00:00 UTC (1d 0h)\nLobbies  none ran in this window\n');
  });

  it('--url-only prints the presigned URL and downloads nothing', async () => {
    const dir = tempDir();
    const r = await runCli(['history', 'export', '--since', '1h', '--url-only'], { env: fx.env, cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\S+\n$/);
    expect(fs.readdirSync(dir)).toEqual([]);
    expect(r.stderr).not.toContain('Lobbies');
    // The URL works on its own, without the token.
    const csv = await (await fetch(r.stdout.trim())).text();
    expect(csv.split('\n')[0]).toBe(COLUMNS);
    const json = await runCli(['history', 'export', '--since', '1h', '--url-only', '--json'], { env: fx.env, cwd: dir });
    expect(Object.keys(JSON.parse(json.stdout))).toEqual(['url', 'query_start', 'query_end']);
  });

  it.each([
    [['--from', '2026-01-02T00:00:00Z', '--to', '2026-01-01T00:00:00Z'], /--from must be before --to/],
    [['--from', '2999-01-01T00:00:00Z'], /^error: --from must be in the past, not 2999-01-01T00:00:00Z$/m],
    [['--since', '1h', '--from', '2026-01-01'], /either --since or --from/],
    [[], /a window is required/],
    [['--since', 'yesterday'], /--since must be a duration/],
    [['--from', 'last tuesday'], /--from must be an RFC 3339 time/],
    [['--since', '1h', '-o', '/nonexistent-dir/x.csv'], /directory \/nonexistent-dir does not exist/],
    [['--since', '1h', '-o', '-', '--json'], /--json prints a summary/],
    [['--since', '1h', '--format', 'table', '-o', 'rows.txt'], /--format table prints on stdout: drop -o/],
    [['--since', '1h', '--format', 'table', '--json'], /--json prints a summary on stdout/],
    [['--since', '1h', '--format', 'xml'], /--format.*(choices|must be one of)/],
    [['--since', '1h', '--url-only', '-o', 'x.csv'], /--url-only downloads nothing: drop -o/],
  ])('refuses %j with exit 2', async (args, message) => {
    const r = await runCli(['history', 'export', ...(args as string[])], { env: fx.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });
});

describe('history export with the embedded emulator, whose links die with the command', () => {
  it('--url-only is refused (exit 2), saying why and pointing to emulator serve', async () => {
    const env = isolatedEnv();
    for (const extra of [[], ['--json']]) {
      const r = await runCli(['history', 'export', '--since', '1h', '--url-only', ...extra], { env });
      expect([r.code, r.stdout]).toEqual([2, '']);
      expect(r.stderr.split('\n').slice(-3)).toEqual([
        'error: --url-only: the embedded emulator stops when this command ends, so its link would be dead by the time it is used',
        '  run `gamehost emulator serve` and pass its --endpoint (its links last an hour), or download with -o <file>',
        '',
      ]);
    }
  });

  it('--json after a download carries the url with a warning that it is dead', async () => {
    const dir = tempDir();
    const r = await runCli(['history', 'export', '--since', '1h', '--json', '-o', 'h.csv'], { env: isolatedEnv(), cwd: dir });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).url).toMatch(/^http:\/\/127\.0\.0\.1:/);
    expect(r.stderr).toContain("warning: the url is the embedded emulator's, dead now that this command ends; `gamehost emulator serve` makes links that last\n");
  });
});

describe('stats --watch refuses a bad interval before any request', () => {
  it.each([['soon'], ['0'], ['-1'], ['2200000']])('--watch %s exits 2', async (value) => {
    const r = await runCli(['stats', '--watch', value], { env: isolatedEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: --watch must be a number of seconds from 0.1 to 86400 (a day), not "${value}"\n`);
    expect(r.stderr).not.toContain('local emulator');
  });
});

describe('stats on an empty emulator', () => {
  it('says so', async () => {
    const r = await runCli(['stats'], { env: isolatedEnv({ NO_COLOR: '1' }), tty: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Players in game: 0\nNo game mode has players yet.\n');
  });
});

/**
 * A stand-in for the service that serves a large export slowly, in pieces, optionally cutting the connection
 * half-way: what the progress display and the atomic write are for.
 */
async function largeExportService(opts: { cutAt?: number } = {}) {
  const row = (i: number) =>
    `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000,9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f,prod,` +
    `48ef3c5e-26fc-5a46-8abe-679bd3dc17ac,lnd-${i % 3 === 0 ? 'sgp' : 'atl'},basic-1d1,f2cd7525-490e-592c-8d39-7c4711c09058,0.0.1,` +
    `4cf77782-8143-54e0-9407-77bd5732a171,default,1795200000000,1795203600000,3600000,3600000\n`;
  const body = Buffer.from(COLUMNS + '\n' + Array.from({ length: 12_000 }, (_, i) => row(i)).join(''));
  const server = http.createServer((req, res) => {
    req.resume();
    if (req.method === 'POST' && req.url!.endsWith('/matchmaker/lobbies/export-history')) {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/export.csv`;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ url }));
      return;
    }
    res.writeHead(200, { 'content-type': 'text/csv', 'content-length': body.length });
    const pieces = 12;
    const size = Math.ceil(body.length / pieces);
    let sent = 0;
    const next = () => {
      if (opts.cutAt !== undefined && sent >= opts.cutAt) return res.socket?.destroy();
      if (sent >= body.length) return res.end();
      res.write(body.subarray(sent, sent + size));
      sent += size;
      setTimeout(next, 25);
    };
    next();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const env = {
    ...isolatedEnv(),
    GAMEHOST_ENDPOINT: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    GAMEHOST_TOKEN: 'cloud.test-token',
    GAMEHOST_GAME: '00000000-0000-4000-8000-000000000001',
  };
  return { env, bytes: body.length, close: () => new Promise<void>((r) => server.close(() => r())) };
}

describe('history export of a large file', () => {
  // The same live line as an upload's (one progress display for both directions).
  const PROGRESS = /downloading [\d.]+% \([\d.]+ (B|KiB|MiB) of [\d.]+ MiB\) at /;

  it('shows a progress line on a terminal, clears it, then the summary', async () => {
    const svc = await largeExportService();
    try {
      const dir = tempDir();
      const r = await runCli(['history', 'export', '--since', '1h', '-o', 'big.csv'], { env: svc.env, cwd: dir, tty: true });
      expect(r.code).toBe(0);
      expect(r.stderr).toMatch(PROGRESS);
      // The line is cleared before the summary is written.
      expect(r.stderr).toMatch(/\x1b\[0K(\x1b\[\?25h)?Wrote/);
      expect(plain(r.stderr)).toContain('Wrote 12,000 lobbies');
      expect(plain(r.stderr)).toMatch(/Regions +lnd-atl 8,000 h \(8,000 lobbies\) · lnd-sgp 4,000 h \(4,000\)/);
      expect(fs.statSync(path.join(dir, 'big.csv')).size).toBe(svc.bytes);
    } finally {
      await svc.close();
    }
  });

  it.each([
    ['in CI', { CI: 'true' }, true],
    ['in GitHub Actions', { GITHUB_ACTIONS: 'true' }, true],
    ['piped', {}, false],
  ])('shows no progress %s', async (_name, extra, tty) => {
    const svc = await largeExportService();
    try {
      const r = await runCli(['history', 'export', '--since', '1h', '-o', 'big.csv'], { env: { ...svc.env, ...extra }, cwd: tempDir(), tty });
      expect(r.code).toBe(0);
      expect(r.stderr).not.toContain('downloading');
      expect(r.stderr).toContain('Wrote 12,000 lobbies');
    } finally {
      await svc.close();
    }
  });

  it('a download cut half-way fails with exit 6 and leaves no file, whole or half', async () => {
    const svc = await largeExportService({ cutAt: 1_000_000 });
    try {
      const dir = tempDir();
      const r = await runCli(['history', 'export', '--since', '1h', '-o', 'big.csv', '--format', 'json'], { env: svc.env, cwd: dir });
      expect(r.code).toBe(6);
      expect(r.stderr).toMatch(/^error: could not reach 127\.0\.0\.1:\d+/m);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      await svc.close();
    }
  });
});
