// Property tests of the views: random but spec-valid answers (seeded, so a failure replays) render at 40, 80 and 120
// columns with no line wider than the terminal (except one holding an id or a token, which is never cut), and no
// NaN, Infinity, undefined or Invalid Date, whatever the strings, numbers, times and sample counts.
import { describe, expect, it } from 'vitest';
import type { CreateLobbyResponse, EmulatorBuild, ListLobbiesResponse, ListRegionsResponse, LobbyLogsResponse, PlayerStatistics } from '../../src/api/types.js';
import { formatLobbyList, formatRegions } from '../../src/output/views/lobbies.js';
import { sanitizeLine } from '../../src/output/sanitize.js';
import { formatBuilds } from '../../src/output/views/build.js';
import { visibleWidth } from '../../src/output/format.js';
import { historyRecord, historyRow, historyTableChunks, HISTORY_COLUMNS } from '../../src/output/views/history.js';
import { formatCreatedLobby, formatLobbyLogs, regionNames } from '../../src/output/views/lobby.js';
import { checkLogLines, formatLogEntries, logEntries, logEntryJson, logEntryLines, mergeEntries, safeJson } from '../../src/output/views/log-lines.js';
import type { ViewOptions } from '../../src/output/views/options.js';
import { formatStats } from '../../src/output/views/stats.js';
import { mulberry32 } from '../../src/emulator/faults.js';

/** The history table as one text, its chunks joined. */
const historyTable = (...args: Parameters<typeof historyTableChunks>) => [...historyTableChunks(...args)].join('');


// Letters that could spell the words above are left out of the random text, so a match is always the CLI's own.
const ASCII = 'abcdefghjklmnopqrstvwxyzABCEFGHJKLMOPQRSTVWXYZ0123456789 -_.:/,"\'';
const CONTROL = ['\x00', '\x07', '\x08', '\t', '\n', '\r', '\x1b[2J', '\x1b]0;title\x07', '\x1b[31m', '\x7f', '\x9b', '\x1bc'];
const WIDE = ['東', '京', '한', '😀', '🎮', 'ｗ', 'é', 'e\u0301', '\u200d'];

class Gen {
  constructor(readonly r: () => number) {}
  int(n: number): number {
    return Math.floor(this.r() * n);
  }
  pick<T>(xs: readonly T[]): T {
    return xs[this.int(xs.length)]!;
  }
  chance(p: number): boolean {
    return this.r() < p;
  }
  text(max = 30): string {
    let s = '';
    const n = this.int(max + 1);
    for (let i = 0; i < n; i++) {
      const k = this.r();
      s += k < 0.7 ? this.pick([...ASCII]) : k < 0.85 ? this.pick(CONTROL) : this.pick(WIDE);
    }
    return s;
  }
  uuid(): string {
    const hex = () => this.int(16).toString(16);
    const part = (n: number) => Array.from({ length: n }, hex).join('');
    return `${part(8)}-${part(4)}-4${part(3)}-8${part(3)}-${part(12)}`;
  }
  number(): number {
    return this.pick([
      () => 0,
      () => -1,
      () => this.r() * 100,
      () => this.r() * 1e6,
      () => this.int(1e9),
      () => this.r() * 1.7976931348623157e308,
      () => -this.r() * 1.7976931348623157e308,
      () => 1.7976931348623157e308,
      () => Number.MIN_VALUE,
      () => -this.r() * 1e3,
    ])();
  }
  /** An RFC 3339 time from 1970 to 9999, sometimes a leap second or an offset, rarely not a time at all. */
  time(): string {
    const ms = this.int(253402300799000);
    const iso = new Date(ms).toISOString();
    const k = this.r();
    if (k < 0.1) return `${iso.slice(0, 10)}T23:59:60Z`;
    if (k < 0.2) return iso.replace('Z', '+05:30');
    if (k < 0.25) return this.text(12);
    return iso;
  }
  samples(big: boolean): number[] {
    const n = big ? 200_000 : this.pick([0, 1, 2, 3, 30, 31, this.int(400)]);
    const flat = this.chance(0.2) ? this.number() : undefined;
    return Array.from({ length: n }, () => flat ?? this.number());
  }
}

const WIDTHS = [40, 80, 120];
const NOW = Date.UTC(2026, 10, 21, 10, 46, 15);
const term = (columns: number): ViewOptions => ({ tty: true, columns, now: NOW, utc: true, color: true });
const pipe: ViewOptions = { tty: false, columns: 80, now: NOW, utc: true, color: false };
// eslint-disable-next-line no-control-regex
const strip = (s: string) => s.replace(/\x1b\[[0-9;]*m/g, '');

/** The first line that reads as garbage, for a failure message that shows it. */
const garbage = (text: string) => strip(text).match(/.*(NaN|Infinity|undefined|Invalid Date).*/)?.[0];

/** Every line fits, unless it holds one of `whole` (an id or a token, never cut); nothing reads as garbage. */
function expectFits(text: string, columns: number, whole: string[], what: string): void {
  expect(garbage(text), what).toBeUndefined();
  // A UUID in the line is looked up, not searched for: 2,000 rows against 2,000 ids took seconds (a timeout at load).
  const ids = new Set(whole);
  const holdsWhole = (line: string) => (line.match(UUIDS) ?? []).some((u) => ids.has(u)) || whole.some((w) => line.includes(w));
  const over = strip(text)
    .split('\n')
    .filter((line) => visibleWidth(line) > columns - 1 && !holdsWhole(line))
    .map((line) => `a line of ${visibleWidth(line)} columns at ${columns}: ${JSON.stringify(line)}`);
  expect(over, what).toEqual([]);
}
const UUIDS = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

function lobbyLogs(g: Gen, big: boolean): LobbyLogsResponse {
  const state = g.pick(['running', 'stopped', 'failed'] as const);
  const opt = (v: string) => (g.chance(0.3) ? undefined : g.chance(0.2) ? null : v);
  return {
    lobby: {
      lobby_id: g.uuid(),
      namespace_id: g.uuid(),
      lobby_group_name_id: g.text(),
      region_id: g.text(),
      create_ts: g.time(),
      start_ts: opt(g.time()),
      ready_ts: opt(g.time()),
      status:
        state === 'running'
          ? { running: {} }
          : { running: null, stopped: { stop_ts: g.time(), failed: state === 'failed', exit_code: g.pick([0, 1, 137, -2147483648, 2147483647]) } },
    },
    metrics: g.chance(0.2)
      ? g.pick([undefined, null])
      : {
          job: g.text(60),
          cpu: g.samples(big),
          memory: g.samples(big && g.chance(0.5)),
          allocated_memory: g.chance(0.5) ? undefined : g.pick([null, 0, 512, g.number()]),
        },
  };
}

function statistics(g: Gen): PlayerStatistics {
  const modes: PlayerStatistics['game_modes'] = {};
  for (let m = g.int(6); m > 0; m--) {
    const regions: Record<string, { player_count: number }> = {};
    for (let r = g.int(6); r > 0; r--) regions[g.text(20)] = { player_count: g.pick([0, 1, g.int(1000), g.number()]) };
    modes[g.text(20)] = { player_count: g.pick([0, g.int(5000), g.number()]), regions };
  }
  return { player_count: g.pick([0, g.int(10000), g.number()]), game_modes: modes };
}

/** One side of an image tag as the service accepts it: `[0-9a-z_-]`, not starting or ending with `-`. */
const tagPart = (g: Gen) => `a${Array.from({ length: g.pick([0, 5, 60, 120]) }, () => g.pick([...'abcdefghijklmnopqrstuvwxyz0123456789_-'])).join('')}0`;

// CPU-bound: thousands of rendered answers; at a load of 12 on 2 cores a case took 17 s, near the 20 s default.
describe('views hold on any spec-valid answer', { timeout: 60_000 }, () => {
  it('lobby logs: status, timeline, sparklines and charts at 40, 80 and 120 columns, and piped', () => {
    const g = new Gen(mulberry32(0x10b));
    for (let i = 0; i < 100; i++) {
      // Two answers carry 200,000 samples: the loops must not spread them into a call.
      const res = lobbyLogs(g, i === 7 || i === 61);
      const whole = [res.lobby.lobby_id];
      // The game's regions, as the service may name them (any text), sometimes listing this lobby's region.
      const regions = g.chance(0.3)
        ? undefined
        : regionNames({
            game: {
              game_id: g.uuid(),
              available_regions: Array.from({ length: g.pick([0, 1, 3, 200]) }, (_, k) => ({
                region_id: k === 0 && g.chance(0.7) ? res.lobby.region_id : g.uuid(),
                region_name_id: g.text(20),
                region_display_name: g.text(60),
              })),
            },
          });
      for (const columns of WIDTHS) {
        for (const chart of [false, true]) {
          expectFits(formatLobbyLogs(res, { ...term(columns), chart, regions }), columns, whole, `case ${i}, chart ${chart}`);
        }
      }
      expect(garbage(formatLobbyLogs(res, { ...pipe, chart: false, regions })), `case ${i} piped`).toBeUndefined();
    }
  });

  it('lobby logs\' lines: one line out per line in, no control character but a tab, no garbage, whatever the lines, times and index', () => {
    const g = new Gen(mulberry32(0x1065));
    // eslint-disable-next-line no-control-regex
    const CONTROLS = /[\x00-\x08\x0a-\x1f\x7f-\x9f]/;
    for (let i = 0; i < 200; i++) {
      const answer = () => {
        const n = g.pick([0, 1, 2, 64, 256, g.int(40)]);
        const lines = Array.from({ length: n }, () =>
          g.chance(0.8) ? Buffer.from(g.chance(0.3) ? Buffer.from(Array.from({ length: g.int(40) }, () => g.int(256))) : Buffer.from(g.text(60))).toString('base64') : g.text(30),
        );
        // As many timestamps, or fewer, or more; oldest first or not.
        const timestamps = Array.from({ length: g.pick([n, n, Math.max(0, n - 1), n + 2, 0]) }, () => g.time());
        return checkLogLines({ lines, timestamps, watch: { index: g.pick(['0', g.text(20), '1795984546123456000', '']) } });
      };
      const entries = mergeEntries(logEntries('std_out', answer()), logEntries('std_err', answer()));
      for (const [tty, timestamps] of [[true, true], [false, false], [false, true]] as const) {
        const text = formatLogEntries(entries, { ...(tty ? term(80) : pipe), timestamps, both: true });
        const out = strip(text).split('\n');
        expect(out.pop()).toBe('');
        expect(out, `case ${i}, tty ${tty}`).toHaveLength(entries.length);
        expect(out.filter((line) => CONTROLS.test(line)), `case ${i}`).toEqual([]);
        expect(garbage(text), `case ${i}`).toBeUndefined();
      }
      // --json's lines and document: control characters escaped, C1 too (JSON.stringify leaves 0x80-0x9f raw).
      const jsonLines = logEntryLines(entries);
      expect(jsonLines.split('\n').slice(0, -1).map((l) => JSON.parse(l))).toEqual(entries.map(logEntryJson));
      expect(CONTROLS.test(jsonLines.replace(/\n/g, '')), `case ${i}`).toBe(false);
      const doc = safeJson(entries.map(logEntryJson), 2);
      expect(JSON.parse(doc)).toEqual(entries.map(logEntryJson));
      expect(CONTROLS.test(doc.replace(/\n/g, '')), `case ${i}`).toBe(false);
    }
  });

  it('stats: tables and bars per game mode, with and without a previous answer', () => {
    const g = new Gen(mulberry32(0x57a75));
    for (let i = 0; i < 100; i++) {
      const stats = statistics(g);
      const previous = g.chance(0.5) ? statistics(g) : undefined;
      for (const columns of WIDTHS) expectFits(formatStats(stats, { ...term(columns), previous, watch: previous !== undefined }), columns, [], `case ${i}`);
      expect(garbage(formatStats(stats, pipe)), `case ${i} piped`).toBeUndefined();
    }
  });

  it('history export --format table: ids whole, other columns shrink or drop', () => {
    const g = new Gen(mulberry32(0x415));
    for (let i = 0; i < 40; i++) {
      const ms = () => String(g.pick([g.int(253402300799000), 0, g.int(1e6)]));
      const rows = Array.from({ length: g.pick([0, 1, 5, 150]) }, () => {
        const fields = HISTORY_COLUMNS.map((c) =>
          c === 'lobby_id' ? g.uuid() : /_ts$|_ms$/.test(c) ? (g.chance(0.1) ? '' : ms()) : g.text(25),
        );
        return historyRow(historyRecord(HISTORY_COLUMNS, fields));
      });
      const ids = rows.map((r) => r.lobbyId);
      for (const columns of WIDTHS) {
        const text = historyTable(rows, term(columns));
        expectFits(text, columns, ids, `case ${i}`);
        // Every id appears whole, at the start of its row.
        const lines = strip(text).split('\n');
        for (const id of ids) expect(lines.some((l) => l.startsWith(id + ' ') || l === id), `case ${i}: ${id}`).toBe(true);
      }
      expect(garbage(historyTable(rows, pipe)), `case ${i} piped`).toBeUndefined();
    }
  });

  it('lobby create: the headline fits, the lobby id and the player token are whole', () => {
    const g = new Gen(mulberry32(0xc4ea7e));
    for (let i = 0; i < 60; i++) {
      const token = Array.from({ length: g.pick([20, 120, 400]) }, () => g.pick([...'abcdef0123456789.'])).join('');
      const ports: CreateLobbyResponse['ports'] = {};
      for (let p = g.int(4); p > 0; p--) ports[g.text(10)] = { hostname: g.text(30), port: g.int(65536), is_tls: g.chance(0.5) };
      const res: CreateLobbyResponse = {
        lobby: { lobby_id: g.uuid(), region: { region_id: g.text(12), display_name: g.text(40) } },
        ports,
        player: { token },
      };
      for (const columns of WIDTHS) {
        const text = strip(formatCreatedLobby(res, term(columns)));
        expectFits(text, columns, [res.lobby.lobby_id, token], `case ${i}`);
        expect(text.split('\n').some((l) => l.endsWith(token)), `case ${i}: the token on one line`).toBe(true);
        expect(text.split('\n').some((l) => l.includes(res.lobby.lobby_id)), `case ${i}: the lobby id`).toBe(true);
      }
    }
  });

  it('lobby list and region list: ids whole on their row, huge lists, odd counts and states, nothing else past the width', () => {
    const g = new Gen(mulberry32(0x10bb1e5));
    for (let i = 0; i < 16; i++) {
      // One huge list; the others small, so the cases stay many.
      const count = i === 0 ? 2_000 : g.pick([0, 1, 5, 60]);
      const res: ListLobbiesResponse = {
        game_modes: [],
        regions: [],
        lobbies: Array.from({ length: count }, () => ({
          region_id: g.text(20),
          game_mode_id: g.text(40),
          lobby_id: g.uuid(),
          max_players_normal: g.pick([1, 32, g.int(1e9), g.number()]),
          max_players_direct: 1,
          max_players_party: 1,
          total_player_count: g.pick([0, g.int(1e9), g.number()]),
          state: g.pick([undefined, null, g.text(200), { nested: [g.text(30), g.number()] }, g.number(), [1, 2, 3]]),
        })),
      };
      const regions: ListRegionsResponse = {
        regions: Array.from({ length: i === 0 ? 500 : g.pick([0, 3, 20]) }, () => ({
          region_id: g.text(20),
          provider_display_name: g.text(40),
          region_display_name: g.text(60),
          datacenter_coord: { latitude: g.number(), longitude: g.number() },
          datacenter_distance_from_client: { kilometers: g.number(), miles: g.number() },
        })),
      };
      const ids = res.lobbies.map((l) => l.lobby_id);
      for (const columns of WIDTHS) {
        for (const withState of [false, true]) {
          const text = strip(formatLobbyList(res, term(columns), withState));
          expectFits(text, columns, ids, `case ${i}`);
          // An empty list on a terminal says why a running lobby may be missing from it.
          if (ids.length === 0) expect(text).toMatch(/^No lobby is listed\.\nA lobby is listed once/);
          const lines = text.split('\n');
          for (const id of ids.slice(0, 50)) expect(lines.some((l) => l.startsWith(id)), `case ${i}: ${id}`).toBe(true);
        }
        expect(garbage(formatRegions(regions, term(columns))), `case ${i} regions`).toBeUndefined();
      }
      const piped = formatLobbyList(res, pipe, true);
      expect(garbage(piped), `case ${i} piped`).toBeUndefined();
      expect(piped.split('\n').filter(Boolean)).toHaveLength(count);
    }
  });

  it('emulator builds: ids and tags whole on their row, names whole or left out, nothing else past the width', () => {
    const g = new Gen(mulberry32(0xb0115));
    for (let i = 0; i < 40; i++) {
      // One answer past a screenful (the streamed layout), the others laid out by cli-table3.
      const builds: EmulatorBuild[] = Array.from({ length: i === 3 ? 300 : g.pick([0, 1, 2, 30]) }, () => ({
        build_id: g.uuid(),
        // Tags as the service allows them (`base:tag`, lowercase letters, digits, `_` and `-`), long ones too.
        image_tag: `${tagPart(g)}:${tagPart(g)}`,
        // Any text, but no zero-width joiner: cli-table3 counts it as a column where the terminal (and our width)
        // counts none, so a screenful would cut such a name by one character (known; see the report).
        display_name: g.text(128).replace(/\u200d/g, ''),
        kind: 'docker_image',
        compression: 'none',
        content_length: g.pick([0, 1, 2 ** 53 + 2, Number.MAX_SAFE_INTEGER, 8e9, g.number()]),
        sha256: g.chance(0.3) ? null : 'ab'.repeat(32),
        complete: g.chance(0.5),
        create_ts: g.time(),
      }));
      for (const columns of WIDTHS) {
        const text = strip(formatBuilds(builds, term(columns)));
        const lines = text.split('\n');
        expect(garbage(text), `case ${i}`).toBeUndefined();
        for (const [r, b] of builds.entries()) {
          // The row holds the id and the tag whole (both made safe for the terminal first).
          expect(lines[r + 1]!.startsWith(sanitizeLine(b.build_id)), `case ${i} row ${r}`).toBe(true);
          expect(lines[r + 1]!.includes(b.image_tag), `case ${i} row ${r}: the tag whole`).toBe(true);
        }
        // Cells are never cut (the one message of an empty list is, to the width).
        if (builds.length) expect(text).not.toContain('…');
        // A line is wider than the terminal only when the id and tag alone are.
        const kept = builds.map((b) => visibleWidth(b.build_id) + 2 + visibleWidth(b.image_tag));
        for (const [r, line] of lines.entries()) {
          if (visibleWidth(line) <= columns - 1) continue;
          // The head is as wide as the widest kept row; a row as its own; the note and anything else fit.
          const widest = r === 0 ? Math.max(0, ...kept) : r <= builds.length ? kept[r - 1]! : 0;
          expect(widest, `case ${i}, ${columns} columns, line ${r}: ${JSON.stringify(line)}`).toBeGreaterThan(columns - 1);
        }
      }
      expect(garbage(formatBuilds(builds, pipe)), `case ${i} piped`).toBeUndefined();
    }
  });
});
