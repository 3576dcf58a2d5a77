// The history export's summary and table count in one form (`4,007` beside `4,007`, never `4007`), and a single
// region or game mode past the busiest is named, never hidden behind `· 1 more`.
import { describe, expect, it } from 'vitest';
import { HistoryTally, formatHistorySummary, historyTableChunks, type HistoryRecord } from '../../src/output/views/history.js';
import { plain } from '../helpers/cli.js';

const WINDOW = { start: Date.UTC(2026, 10, 20, 10), end: Date.UTC(2026, 10, 21, 10) };
const term = (columns: number) => ({ tty: true, columns, now: WINDOW.end, utc: true, color: true });

function record(i: number, region: string, mode: string, running: boolean): HistoryRecord {
  const start = WINDOW.start + i * 1000;
  return {
    lobby_id: `${String(i).padStart(8, '0')}-0000-4000-8000-000000000000`,
    region_name: region,
    lobby_group_name: mode,
    start_ts: String(start),
    stop_ts: running ? '' : String(start + 60_000),
    total_uptime_ms: '60000',
    query_uptime_ms: '60000',
  };
}

function summary(records: HistoryRecord[]) {
  const tally = new HistoryTally();
  for (const r of records) tally.add(r);
  return tally.summary();
}

describe('history export counts', () => {
  // 4,007 lobbies: 3,000 in lnd-atl (all "default"), 1,007 elsewhere; 1,002 still running.
  const many = Array.from({ length: 4007 }, (_, i) =>
    record(i, i < 3000 ? 'lnd-atl' : i < 4000 ? 'lnd-fra' : 'lnd-sgp', i < 3000 ? 'default' : 'duos', i >= 3005),
  );

  it('the summary and the table footer write every count in the same form, with thousands separated', () => {
    const text = plain(formatHistorySummary(summary(many), WINDOW, term(120)));
    expect(text).toContain('Lobbies       4,007: 3,005 stopped, 1,002 still running\n');
    expect(text).toContain('Regions       lnd-atl 50.0 h (3,000 lobbies) · lnd-fra 16.7 h (1,000) · lnd-sgp 0.12 h (7)\n');
    expect(text).toContain('Game modes    default 50.0 h (3,000 lobbies) · duos 16.8 h (1,007)\n');
    // No count of four digits or more without its separator, outside the window's dates.
    for (const line of text.split('\n').filter((l) => !l.startsWith('Window'))) expect(line).not.toMatch(/\d{4}/);
    const rows = many.map((r) => ({ lobbyId: r.lobby_id!, mode: r.lobby_group_name!, region: r.region_name!, start: 0, stop: null, totalMs: 1, windowMs: 1 }));
    const table = plain([...historyTableChunks(rows, term(120))].join(''));
    expect(table.trimEnd().split('\n').at(-1)).toBe('4,007 lobbies · times in UTC');
  });

  it('a single group past the busiest three is named, never "· 1 more"; two or more are counted', () => {
    const modes = (n: number) => summary(Array.from({ length: n }, (_, i) => record(i, 'lnd-atl', `mode-${i + 1}`, false)));
    for (const columns of [40, 60, 80, 120, 200]) {
      const four = plain(formatHistorySummary(modes(4), WINDOW, term(columns)));
      expect(four).not.toMatch(/\b1 more/);
      const five = plain(formatHistorySummary(modes(5), WINDOW, term(columns)));
      expect(five).not.toMatch(/\b1 more/);
      // (Below 80 columns the line is cut to the width, its end with it.)
      if (columns >= 80) expect(five).toMatch(/· [234] more\n/);
    }
    expect(plain(formatHistorySummary(modes(4), WINDOW, term(120)))).toContain(
      'Game modes    mode-1 0.02 h (1 lobby) · mode-2 0.02 h (1) · mode-3 0.02 h (1) · mode-4 0.02 h (1)\n',
    );
    // Too narrow for four: two named and the other two counted, rather than three and "1 more".
    expect(plain(formatHistorySummary(modes(4), WINDOW, term(70)))).toContain('Game modes    mode-1 0.02 h (1 lobby) · mode-2 0.02 h (1) · 2 more\n');
    // Two groups are both named, however narrow (the line is cut to the width instead).
    const two = plain(formatHistorySummary(modes(2), WINDOW, term(50)));
    expect(two).toMatch(/\nGame modes    mode-1 0\.02 h \(1 lobby\) · mode-2 0…\n/);
    expect(two).not.toContain('more');
  });
});
