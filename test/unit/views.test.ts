// Rendering goldens: each view from fixed data, a fixed clock and UTC, at 80 and 120 columns, compared as a person
// reads it (colour stripped). Colour is on while rendering, so the goldens also prove colour never shifts a column.
import { describe, expect, it } from 'vitest';
import type { LobbyLogsResponse, PlayerStatistics } from '../../src/api/types.js';
import { CsvError, CsvStreamParser } from '../../src/output/csv.js';
import { formatTime, visibleWidth } from '../../src/output/format.js';
import {
  HistoryTally,
  formatHistorySummary,
  historyTableChunks,
  historyJson,
  historyRecord,
  historyRow,
} from '../../src/output/views/history.js';
import { HIDE_CURSOR, LiveFrame, SHOW_CURSOR, watchFooter } from '../../src/output/views/live.js';
import { formatTable } from '../../src/output/table.js';
import { formatLobbyLogs, lobbyChangeLine, type LobbyViewOptions } from '../../src/output/views/lobby.js';
import { formatStats, statsChangeLines, type StatsViewOptions } from '../../src/output/views/stats.js';
import { plain, readCsv } from '../helpers/cli.js';
import { Writable } from 'node:stream';

/** The history table as one text, its chunks joined. */
const historyTable = (...args: Parameters<typeof historyTableChunks>) => [...historyTableChunks(...args)].join('');

const golden = (lines: string[]) => lines.join('\n') + '\n';

const NOW = Date.UTC(2026, 10, 21, 10, 46, 15);
const LOBBY = '2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6';
const MiB = 1024 * 1024;
const base = {
  lobby_id: LOBBY,
  namespace_id: '9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  lobby_group_name_id: 'default',
  region_id: '8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  create_ts: '2026-11-21T10:42:03.000Z',
  start_ts: '2026-11-21T10:42:04.200Z',
  ready_ts: '2026-11-21T10:42:05.500Z',
};
const cpu = Array.from({ length: 30 }, (_, i) => Math.round((30 + 12 * Math.sin(i / 3) + (i % 4)) * 100) / 100);
const memory = Array.from({ length: 30 }, (_, i) => Math.round((200 + i * 2 + 8 * Math.cos(i / 2)) * MiB));
const running: LobbyLogsResponse = {
  lobby: { ...base, status: { running: {} } },
  metrics: { job: `lobby-${LOBBY}`, cpu, memory, allocated_memory: 512 },
  stdout_presigned_urls: [],
  stderr_presigned_urls: [],
  perf_lists: [],
};
const starting: LobbyLogsResponse = {
  lobby: { ...base, start_ts: undefined, ready_ts: undefined, create_ts: '2026-11-21T10:46:13.000Z', status: { running: {} } },
};
const stopped: LobbyLogsResponse = {
  lobby: { ...base, status: { running: null, stopped: { stop_ts: '2026-11-21T10:45:00.000Z', failed: false, exit_code: 0 } } },
};
const failed: LobbyLogsResponse = {
  lobby: { ...base, ready_ts: undefined, status: { running: null, stopped: { stop_ts: '2026-11-21T10:42:09.750Z', failed: true, exit_code: 137 } } },
};

const stats: PlayerStatistics = {
  player_count: 7,
  game_modes: {
    duos: { player_count: 2, regions: { 'lnd-atl': { player_count: 0 }, 'lnd-fra': { player_count: 2 }, 'lnd-sgp': { player_count: 0 } } },
    default: { player_count: 5, regions: { 'lnd-atl': { player_count: 3 }, 'lnd-fra': { player_count: 1 }, 'lnd-sgp': { player_count: 1 } } },
    squads: { player_count: 0, regions: { 'lnd-atl': { player_count: 0 }, 'lnd-fra': { player_count: 0 }, 'lnd-sgp': { player_count: 0 } } },
  },
};
const statsBefore: PlayerStatistics = {
  player_count: 5,
  game_modes: {
    duos: { player_count: 1, regions: { 'lnd-atl': { player_count: 1 }, 'lnd-fra': { player_count: 0 } } },
    default: { player_count: 4, regions: { 'lnd-atl': { player_count: 2 }, 'lnd-fra': { player_count: 2 } } },
  },
};
const emptyStats: PlayerStatistics = {
  player_count: 0,
  game_modes: { default: { player_count: 0, regions: { 'lnd-atl': { player_count: 0 } } } },
};

const CSV_HEADER =
  'lobby_id,namespace_id,namespace_name,region_id,region_name,tier_name,version_id,version_name,lobby_group_id,lobby_group_name,start_ts,stop_ts,total_uptime_ms,query_uptime_ms';
const csvRow = (id: string, region: string, mode: string, start: number, stop: number | null, total: number, inWindow: number) =>
  `${id},9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f,prod,00000000-0000-4000-8000-00000000000${region.length},${region},basic-1d1,` +
  `f2cd7525-490e-592c-8d39-7c4711c09058,0.0.1,4cf77782-8143-54e0-9407-77bd5732a171,${mode},${start},${stop ?? ''},${total},${inWindow}`;
const WINDOW = { start: Date.UTC(2026, 10, 20, 10, 0, 0), end: Date.UTC(2026, 10, 21, 10, 0, 0) };
const CSV =
  [
    CSV_HEADER,
    csvRow('7a1e5a52-3c0b-4f7e-9d55-0b6f2a9c1e01', 'lnd-atl', 'default', Date.UTC(2026, 10, 21, 8, 30), null, 5_400_000, 5_400_000),
    csvRow('5b2f6b63-4d1c-4a8f-8e66-1c7a3b0d2f02', 'lnd-fra', 'duos', Date.UTC(2026, 10, 21, 6, 0), Date.UTC(2026, 10, 21, 7, 15, 30), 4_530_000, 4_530_000),
    csvRow('3c4a7c74-5e2d-4b9a-9f77-2d8b4c1e3a03', 'lnd-atl', 'default', Date.UTC(2026, 10, 20, 9, 0), Date.UTC(2026, 10, 20, 12, 0), 10_800_000, 7_200_000),
    csvRow('1d5b8d85-6f3e-4cab-8a88-3e9c5d2f4b04', 'lnd-sgp', 'squads', Date.UTC(2026, 10, 20, 11, 0), Date.UTC(2026, 10, 20, 11, 0, 42), 42_000, 42_000),
    csvRow('0e6c9e96-7a4f-4dbc-9b99-4fad6e3a5c05', 'lnd-syd', 'default', Date.UTC(2026, 10, 20, 13, 0), Date.UTC(2026, 10, 20, 14, 0), 3_600_000, 3_600_000),
  ].join('\n') + '\n';
const [csvHeader, ...csvRows] = readCsv(CSV) as [string[], ...string[][]];
const records = csvRows.map((r) => historyRecord(csvHeader, r));
const summaryOf = (rs: typeof records) => {
  const tally = new HistoryTally();
  rs.forEach((r) => tally.add(r));
  return tally.summary();
};

/** A terminal of `columns`, colour on, clock fixed, times in UTC. */
const term = (columns: number, extra: Partial<LobbyViewOptions & StatsViewOptions> = {}) => ({
  tty: true,
  columns,
  now: NOW,
  utc: true,
  color: true,
  chart: false,
  ...extra,
});
const pipe = { ...term(80), tty: false, color: false };

/** What a person sees, and a check that no line would wrap on that terminal. */
function seen(text: string, columns: number): string {
  for (const line of text.split('\n')) expect(visibleWidth(line), line).toBeLessThanOrEqual(columns - 1);
  return plain(text);
}

const RUNNING_80 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ● running',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    2026-11-21 10:42:05 UTC  +1.3 s',
  '  stopped  not yet                  running 4m 09s so far',
  '',
  'Metrics  lobby-2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
  '  CPU     now 28.1%  peak 44.8%  mean 33.7%',
  '          ▃▃▄▄▄▄▄▄▃▃▃▃▂▂▂▂▂▂▃▃▃▄▄▄▄▄▄▄▃▃',
  '  Memory  now 255 MiB (50%)  peak 259 MiB  mean 230 MiB  of 512 MiB',
  '          ▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▅▅▅▅▄',
]);

const RUNNING_120 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ● running',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    2026-11-21 10:42:05 UTC  +1.3 s',
  '  stopped  not yet                  running 4m 09s so far',
  '',
  'Metrics  lobby-2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
  '  CPU     ▃▃▄▄▄▄▄▄▃▃▃▃▂▂▂▂▂▂▃▃▃▄▄▄▄▄▄▄▃▃  now 28.1%  peak 44.8%  mean 33.7%',
  '  Memory  ▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▅▅▅▅▄  now 255 MiB (50%)  peak 259 MiB  mean 230 MiB  of 512 MiB',
]);

const RUNNING_CHART_80 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ● running',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    2026-11-21 10:42:05 UTC  +1.3 s',
  '  stopped  not yet                  running 4m 09s so far',
  '',
  'Metrics  lobby-2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
  '  CPU     now 28.1%  peak 44.8%  mean 33.7%',
  '  Memory  now 255 MiB (50%)  peak 259 MiB  mean 230 MiB  of 512 MiB',
  '',
  '  CPU (% of one core)',
  '  50% ┤',
  '  40% ┤    ╭─────────────╮                       ╭─────────────╮',
  '  30% ┤────╯             ╰─────╮           ╭─────╯             ╰───',
  '  20% ┤                        ╰───────────╯',
  '  10% ┤',
  '      └────────────────────────────────────────────────────────────',
  '      30 samples                                                now',
  '',
  '  Memory (MiB of 512 MiB allocated)',
  '  280 ┤',
  '  260 ┤                                                ╭───────────',
  '  240 ┤                        ╭─────────╮   ╭─────────╯',
  '  220 ┤                ╭───────╯         ╰───╯',
  '  200 ┤────────────────╯',
  '      └────────────────────────────────────────────────────────────',
  '      30 samples                                                now',
]);

const RUNNING_CHART_120 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ● running',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    2026-11-21 10:42:05 UTC  +1.3 s',
  '  stopped  not yet                  running 4m 09s so far',
  '',
  'Metrics  lobby-2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
  '  CPU     now 28.1%  peak 44.8%  mean 33.7%',
  '  Memory  now 255 MiB (50%)  peak 259 MiB  mean 230 MiB  of 512 MiB',
  '',
  '  CPU (% of one core)',
  '  50% ┤',
  '  40% ┤      ╭────────────────────╮                                   ╭────────────────────╮',
  '  30% ┤──────╯                    ╰────────╮                 ╭────────╯                    ╰─────',
  '  20% ┤                                    ╰─────────────────╯',
  '  10% ┤',
  '      └──────────────────────────────────────────────────────────────────────────────────────────',
  '      30 samples                                                                              now',
  '',
  '  Memory (MiB of 512 MiB allocated)',
  '  280 ┤',
  '  260 ┤                                                                        ╭─────────────────',
  '  240 ┤                                    ╭──────────────╮     ╭──────────────╯',
  '  220 ┤                        ╭───────────╯              ╰─────╯',
  '  200 ┤────────────────────────╯',
  '      └──────────────────────────────────────────────────────────────────────────────────────────',
  '      30 samples                                                                              now',
]);

const STARTING_80 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ● running',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        2.0 s',
  '',
  'Timeline',
  '  created  2026-11-21 10:46:13 UTC',
  '  started  pending                  +2.0 s so far',
  '  ready    pending',
  '  stopped  pending',
  '',
  'Metrics  none reported yet',
]);

const STOPPED_80 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ■ stopped (exit code 0)',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  'Lifetime   2m 57s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    2026-11-21 10:42:05 UTC  +1.3 s',
  '  stopped  2026-11-21 10:45:00 UTC  +2m 54s',
  '',
  'Metrics  none: the service sent no samples for this lobby',
]);

const STOPPED_120 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ■ stopped (exit code 0)',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  'Lifetime   2m 57s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    2026-11-21 10:42:05 UTC  +1.3 s',
  '  stopped  2026-11-21 10:45:00 UTC  +2m 54s',
  '',
  'Metrics  none: the service sent no samples for this lobby',
]);

const FAILED_80 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ✖ failed (exit code 137)',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  'Lifetime   6.8 s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    never',
  '  stopped  2026-11-21 10:42:09 UTC  +5.5 s',
  '',
  'Metrics  none: the service sent no samples for this lobby',
]);

const FAILED_120 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ✖ failed (exit code 137)',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  'Lifetime   6.8 s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    never',
  '  stopped  2026-11-21 10:42:09 UTC  +5.5 s',
  '',
  'Metrics  none: the service sent no samples for this lobby',
]);

const FAILED_LAST_SEEN_80 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ✖ failed (exit code 137)',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  'Lifetime   6.8 s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    never',
  '  stopped  2026-11-21 10:42:09 UTC  +5.5 s',
  '',
  'Metrics  lobby-2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6, last seen 10:42:09',
  '  CPU     last 28.1%  peak 44.8%  mean 33.7%',
  '          ▃▃▄▄▄▄▄▄▃▃▃▃▂▂▂▂▂▂▃▃▃▄▄▄▄▄▄▄▃▃',
  '  Memory  last 255 MiB (50%)  peak 259 MiB  mean 230 MiB  of 512 MiB',
  '          ▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▅▅▅▅▄',
]);

const STOPPED_WITH_METRICS_80 = golden([
  'Lobby 2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6  ■ stopped (exit code 0)',
  'Game mode  default',
  'Region     8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'Namespace  9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'Age        4m 12s',
  'Lifetime   2m 57s',
  '',
  'Timeline',
  '  created  2026-11-21 10:42:03 UTC',
  '  started  2026-11-21 10:42:04 UTC  +1.2 s',
  '  ready    2026-11-21 10:42:05 UTC  +1.3 s',
  '  stopped  2026-11-21 10:45:00 UTC  +2m 54s',
  '',
  'Metrics  lobby-2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
  '  CPU     last 28.1%  peak 44.8%  mean 33.7%',
  '          ▃▃▄▄▄▄▄▄▃▃▃▃▂▂▂▂▂▂▃▃▃▄▄▄▄▄▄▄▃▃',
  '  Memory  last 255 MiB (50%)  peak 259 MiB  mean 230 MiB  of 512 MiB',
  '          ▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▄▅▅▅▅▄',
]);

const RUNNING_PIPED = golden([
  'lobby_id	2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
  'status	running',
  'game_mode	default',
  'region_id	8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'namespace_id	9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'created_ts	2026-11-21T10:42:03Z',
  'started_ts	2026-11-21T10:42:04.200Z',
  'ready_ts	2026-11-21T10:42:05.500Z',
  'age_ms	252000',
  'job	lobby-2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
  'cpu_percent_now	28.13',
  'cpu_percent_peak	44.79',
  'cpu_percent_mean	33.73',
  'memory_bytes_now	267555287',
  'memory_bytes_peak	271853367',
  'memory_bytes_mean	240725985',
  'allocated_memory_mb	512',
]);

const FAILED_PIPED = golden([
  'lobby_id	2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6',
  'status	failed',
  'exit_code	137',
  'game_mode	default',
  'region_id	8d38dfcb-f2cc-56f0-8353-6a3423b04e15',
  'namespace_id	9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f',
  'created_ts	2026-11-21T10:42:03Z',
  'started_ts	2026-11-21T10:42:04.200Z',
  'stopped_ts	2026-11-21T10:42:09.750Z',
  'age_ms	252000',
]);

const STATS_80 = golden([
  'Players in game: 7',
  '',
  'default  5 players (71% of all)',
  '  REGION   PLAYERS  SHARE',
  '  lnd-atl        3  ██████████████████              60%',
  '  lnd-fra        1  ██████                          20%',
  '  lnd-sgp        1  ██████                          20%',
  '',
  'duos  2 players (29% of all)',
  '  REGION   PLAYERS  SHARE',
  '  lnd-fra        2  ██████████████████████████████ 100%',
]);

const STATS_120 = golden([
  'Players in game: 7',
  '',
  'default  5 players (71% of all)',
  '  REGION   PLAYERS  SHARE',
  '  lnd-atl        3  ██████████████████              60%',
  '  lnd-fra        1  ██████                          20%',
  '  lnd-sgp        1  ██████                          20%',
  '',
  'duos  2 players (29% of all)',
  '  REGION   PLAYERS  SHARE',
  '  lnd-fra        2  ██████████████████████████████ 100%',
]);

const STATS_50 = golden([
  'Players in game: 7',
  '',
  'default  5 players (71% of all)',
  '  REGION   PLAYERS  SHARE',
  '  lnd-atl        3  ██████████████▍           60%',
  '  lnd-fra        1  ████▊                     20%',
  '  lnd-sgp        1  ████▊                     20%',
  '',
  'duos  2 players (29% of all)',
  '  REGION   PLAYERS  SHARE',
  '  lnd-fra        2  ████████████████████████ 100%',
]);

const STATS_WATCH_80 = golden([
  'Players in game: 7  +2',
  '',
  'default  5 players (71% of all)  +1',
  '  REGION   PLAYERS  SHARE                                CHANGE',
  '  lnd-atl        3  ██████████████████              60%      +1',
  '  lnd-fra        1  ██████                          20%      −1',
  '  lnd-sgp        1  ██████                          20%      +1',
  '',
  'duos  2 players (29% of all)  +1',
  '  REGION   PLAYERS  SHARE                                CHANGE',
  '  lnd-fra        2  ██████████████████████████████ 100%      +2',
  '  lnd-atl        0                                   0%      −1',
]);

const STATS_WATCH_120 = golden([
  'Players in game: 7  +2',
  '',
  'default  5 players (71% of all)  +1',
  '  REGION   PLAYERS  SHARE                                CHANGE',
  '  lnd-atl        3  ██████████████████              60%      +1',
  '  lnd-fra        1  ██████                          20%      −1',
  '  lnd-sgp        1  ██████                          20%      +1',
  '',
  'duos  2 players (29% of all)  +1',
  '  REGION   PLAYERS  SHARE                                CHANGE',
  '  lnd-fra        2  ██████████████████████████████ 100%      +2',
  '  lnd-atl        0                                   0%      −1',
]);

const STATS_EMPTY = golden([
  'Players in game: 0',
  'No game mode has players yet.',
]);

const STATS_PIPED = golden([
  'default	lnd-atl	3',
  'default	lnd-fra	1',
  'default	lnd-sgp	1',
  'duos	lnd-fra	2',
  'duos	lnd-atl	0',
  'duos	lnd-sgp	0',
  'squads	lnd-atl	0',
  'squads	lnd-fra	0',
  'squads	lnd-sgp	0',
]);

const STATS_FIRST_LINES = golden([
  '2026-11-21T10:46:15Z	default	lnd-atl	2	+2',
  '2026-11-21T10:46:15Z	default	lnd-fra	2	+2',
  '2026-11-21T10:46:15Z	duos	lnd-atl	1	+1',
  '2026-11-21T10:46:15Z	duos	lnd-fra	0	+0',
]);

const STATS_CHANGE_LINES = golden([
  '2026-11-21T10:46:15Z	default	lnd-atl	3	+1',
  '2026-11-21T10:46:15Z	default	lnd-fra	1	-1',
  '2026-11-21T10:46:15Z	default	lnd-sgp	1	+1',
  '2026-11-21T10:46:15Z	duos	lnd-fra	2	+2',
  '2026-11-21T10:46:15Z	duos	lnd-atl	0	-1',
]);

const SUMMARY_80 = golden([
  'Window        2026-11-20 10:00:00 UTC → 2026-11-21 10:00:00 UTC (1d 0h)',
  'Lobbies       5: 4 stopped, 1 still running',
  'Lobby-hours   5.77 h in the window, 6.77 h in total',
  'Regions       lnd-atl 3.50 h (2 lobbies) · lnd-fra 1.26 h (1) · 2 more',
  'Game modes    default 4.50 h (3 lobbies) · duos 1.26 h (1) · squads 0.01 h (1)',
  'Failed stops  unknown: the export has no exit codes (see `lobby logs <id>`)',
]);

const SUMMARY_120 = golden([
  'Window        2026-11-20 10:00:00 UTC → 2026-11-21 10:00:00 UTC (1d 0h)',
  'Lobbies       5: 4 stopped, 1 still running',
  'Lobby-hours   5.77 h in the window, 6.77 h in total',
  'Regions       lnd-atl 3.50 h (2 lobbies) · lnd-fra 1.26 h (1) · lnd-syd 1.00 h (1) · lnd-sgp 0.01 h (1)',
  'Game modes    default 4.50 h (3 lobbies) · duos 1.26 h (1) · squads 0.01 h (1)',
  'Failed stops  unknown: the export has no exit codes (see `lobby logs <id>`)',
]);

const SUMMARY_PIPED = golden([
  'Window        2026-11-20T10:00:00Z → 2026-11-21T10:00:00Z (1d 0h)',
  'Lobbies       5: 4 stopped, 1 still running',
  'Lobby-hours   5.77 h in the window, 6.77 h in total',
  'Regions       lnd-atl 3.50 h (2 lobbies) · lnd-fra 1.26 h (1) · lnd-syd 1.00 h (1) · lnd-sgp 0.01 h (1)',
  'Game modes    default 4.50 h (3 lobbies) · duos 1.26 h (1) · squads 0.01 h (1)',
  'Failed stops  unknown: the export has no exit codes (see `lobby logs <id>`)',
]);

const SUMMARY_EMPTY_80 = golden([
  'Window   2026-11-20 10:00:00 UTC → 2026-11-21 10:00:00 UTC (1d 0h)',
  'Lobbies  none ran in this window',
]);

const SUMMARY_EMPTY_120 = golden([
  'Window   2026-11-20 10:00:00 UTC → 2026-11-21 10:00:00 UTC (1d 0h)',
  'Lobbies  none ran in this window',
]);

const TABLE_80 = golden([
  'LOBBY                                 GAME MODE  REGION   STOPPED      UPTIME',
  '7a1e5a52-3c0b-4f7e-9d55-0b6f2a9c1e01  default    lnd-atl  running      1h 30m',
  '5b2f6b63-4d1c-4a8f-8e66-1c7a3b0d2f02  duos       lnd-fra  11-21 07:15  1h 15m',
  '3c4a7c74-5e2d-4b9a-9f77-2d8b4c1e3a03  default    lnd-atl  11-20 12:00  3h 00m',
  '1d5b8d85-6f3e-4cab-8a88-3e9c5d2f4b04  squads     lnd-sgp  11-20 11:00    42 s',
  '0e6c9e96-7a4f-4dbc-9b99-4fad6e3a5c05  default    lnd-syd  11-20 14:00  1h 00m',
  'STARTED, IN WINDOW left out to fit: --wide shows them',
  '5 lobbies · times in UTC',
]);

const TABLE_120 = golden([
  'LOBBY                                 GAME MODE  REGION   STARTED              STOPPED              UPTIME  IN WINDOW',
  '7a1e5a52-3c0b-4f7e-9d55-0b6f2a9c1e01  default    lnd-atl  2026-11-21 08:30:00  running              1h 30m     1h 30m',
  '5b2f6b63-4d1c-4a8f-8e66-1c7a3b0d2f02  duos       lnd-fra  2026-11-21 06:00:00  2026-11-21 07:15:30  1h 15m     1h 15m',
  '3c4a7c74-5e2d-4b9a-9f77-2d8b4c1e3a03  default    lnd-atl  2026-11-20 09:00:00  2026-11-20 12:00:00  3h 00m     2h 00m',
  '1d5b8d85-6f3e-4cab-8a88-3e9c5d2f4b04  squads     lnd-sgp  2026-11-20 11:00:00  2026-11-20 11:00:42    42 s       42 s',
  '0e6c9e96-7a4f-4dbc-9b99-4fad6e3a5c05  default    lnd-syd  2026-11-20 13:00:00  2026-11-20 14:00:00  1h 00m     1h 00m',
  '5 lobbies · times in UTC',
]);

const TABLE_PIPED = golden([
  '7a1e5a52-3c0b-4f7e-9d55-0b6f2a9c1e01	default	lnd-atl	2026-11-21T08:30:00Z	-	5400000	5400000',
  '5b2f6b63-4d1c-4a8f-8e66-1c7a3b0d2f02	duos	lnd-fra	2026-11-21T06:00:00Z	2026-11-21T07:15:30Z	4530000	4530000',
  '3c4a7c74-5e2d-4b9a-9f77-2d8b4c1e3a03	default	lnd-atl	2026-11-20T09:00:00Z	2026-11-20T12:00:00Z	10800000	7200000',
  '1d5b8d85-6f3e-4cab-8a88-3e9c5d2f4b04	squads	lnd-sgp	2026-11-20T11:00:00Z	2026-11-20T11:00:42Z	42000	42000',
  '0e6c9e96-7a4f-4dbc-9b99-4fad6e3a5c05	default	lnd-syd	2026-11-20T13:00:00Z	2026-11-20T14:00:00Z	3600000	3600000',
]);

const TABLE_EMPTY = golden([
  'No lobbies ran in this window.',
]);

describe('lobby logs view', () => {
  it.each([
    ['a running lobby at 80 columns: sparklines under their numbers', running, 80, RUNNING_80],
    ['a running lobby at 120 columns: sparklines beside their numbers', running, 120, RUNNING_120],
    ['a lobby still starting', starting, 80, STARTING_80],
    ['a stopped lobby at 80 columns', stopped, 80, STOPPED_80],
    ['a stopped lobby at 120 columns', stopped, 120, STOPPED_120],
    ['a failed lobby at 80 columns', failed, 80, FAILED_80],
    ['a failed lobby at 120 columns', failed, 120, FAILED_120],
  ])('%s', (_name, res, columns, expected) => {
    const text = formatLobbyLogs(res, term(columns));
    expect(seen(text, columns)).toBe(expected);
  });

  it.each([
    [80, RUNNING_CHART_80],
    [120, RUNNING_CHART_120],
  ])('--chart draws CPU and memory as line charts with axes at %i columns', (columns, expected) => {
    expect(seen(formatLobbyLogs(running, term(columns, { chart: true })), columns)).toBe(expected);
  });

  it('a stopped lobby keeps the metrics the service sent: the peak stays, the latest sample is "last"', () => {
    const withMetrics: LobbyLogsResponse = { ...stopped, metrics: running.metrics };
    expect(seen(formatLobbyLogs(withMetrics, term(80)), 80)).toBe(STOPPED_WITH_METRICS_80);
    // An answer with the job but no samples says so, naming the job.
    const empty: LobbyLogsResponse = { ...stopped, metrics: { job: 'lobby-x', cpu: [], memory: [], allocated_memory: 512 } };
    expect(plain(formatLobbyLogs(empty, term(80)))).toMatch(/\nMetrics  lobby-x: none: the service sent no samples for this lobby\n$/);
  });

  it('a started, running lobby whose answer has no metrics says in one line that no server of it is measured', () => {
    const { metrics: _none, ...unmeasured } = running;
    const out = plain(formatLobbyLogs(unmeasured, term(80)));
    expect(out).toMatch(/\nMetrics  none: no server of this lobby is measured\n$/);
    expect(out).not.toMatch(/CPU|Memory/);
  });

  it('a watch keeps the last metrics it saw when the stopped lobby reports none', () => {
    const lastSeen = { metrics: running.metrics!, at: Date.UTC(2026, 10, 21, 10, 42, 9) };
    expect(seen(formatLobbyLogs(failed, term(80, { lastSeen })), 80)).toBe(FAILED_LAST_SEEN_80);
  });

  it('colours the state: green running, red failed; without colour the text is the same', () => {
    expect(formatLobbyLogs(running, term(80))).toContain('\x1b[32m● running');
    expect(formatLobbyLogs(failed, term(80))).toContain('\x1b[31m✖ failed (exit code 137)');
    expect(formatLobbyLogs(failed, term(80, { color: false }))).toBe(plain(formatLobbyLogs(failed, term(80))));
  });

  it('piped: key<TAB>value lines with RFC 3339 UTC times and raw numbers', () => {
    expect(formatLobbyLogs(running, { ...pipe, chart: false })).toBe(RUNNING_PIPED);
    expect(formatLobbyLogs(failed, { ...pipe, chart: false })).toBe(FAILED_PIPED);
  });

  it('a watch line per change: observed time, status, step, exit code, CPU and memory now', () => {
    expect(lobbyChangeLine(running, NOW)).toBe(`2026-11-21T10:46:15Z\trunning\tready\t-\t${cpu.at(-1)}\t${memory.at(-1)}\n`);
    expect(lobbyChangeLine(failed, NOW)).toBe('2026-11-21T10:46:15Z\tfailed\tstopped\t137\t-\t-\n');
  });

  it('with --utc off, times are local with their offset', () => {
    const text = plain(formatLobbyLogs(stopped, term(120, { utc: false })));
    expect(text).toContain(`created  ${formatTime('2026-11-21T10:42:03.000Z', { local: true })}`);
    expect(text).toMatch(/created  \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{2}:\d{2}\n/);
  });
});

describe('stats view', () => {
  it.each([
    [80, STATS_80],
    [120, STATS_120],
    [50, STATS_50],
  ])('a table per game mode with a bar per region, busiest first, at %i columns', (columns, expected) => {
    expect(seen(formatStats(stats, term(columns)), columns)).toBe(expected);
  });

  it.each([
    [80, STATS_WATCH_80],
    [120, STATS_WATCH_120],
  ])('--watch shows the change since the last refresh at %i columns, a region that emptied included', (columns, expected) => {
    expect(seen(formatStats(stats, term(columns, { previous: statsBefore, watch: true })), columns)).toBe(expected);
  });

  it.each([80, 120])('empty statistics at %i columns', (columns) => {
    expect(seen(formatStats(emptyStats, term(columns)), columns)).toBe(STATS_EMPTY);
  });

  it('piped: one mode<TAB>region<TAB>players row each, zeros included', () => {
    expect(formatStats(stats, pipe)).toBe(STATS_PIPED);
    expect(formatStats(emptyStats, pipe)).toBe('default\tlnd-atl\t0\n');
  });

  it('a piped watch prints every row first, then only the rows that changed, with ASCII signs', () => {
    expect(statsChangeLines(statsBefore, undefined, NOW)).toBe(STATS_FIRST_LINES);
    expect(statsChangeLines(stats, statsBefore, NOW)).toBe(STATS_CHANGE_LINES);
    expect(statsChangeLines(stats, stats, NOW)).toBe('');
  });
});

describe('history export views', () => {
  it.each([
    [80, SUMMARY_80],
    [120, SUMMARY_120],
  ])('the summary at %i columns: regions that do not fit are counted, not cut', (columns, expected) => {
    expect(seen(formatHistorySummary(summaryOf(records), WINDOW, term(columns)), columns)).toBe(expected);
  });

  it('the summary on a pipe: RFC 3339 times and every line whole', () => {
    expect(formatHistorySummary(summaryOf(records), WINDOW, pipe)).toBe(SUMMARY_PIPED);
  });

  it.each([
    [80, SUMMARY_EMPTY_80],
    [120, SUMMARY_EMPTY_120],
  ])('an empty history window at %i columns', (columns, expected) => {
    expect(seen(formatHistorySummary(summaryOf([]), WINDOW, term(columns)), columns)).toBe(expected);
    expect(seen(historyTable([], term(columns)), columns)).toBe(TABLE_EMPTY);
  });

  it('the summary adds up lobby-hours and counts running and stopped lobbies', () => {
    const s = summaryOf(records);
    expect(s).toMatchObject({ lobbies: 5, running: 1, stopped: 4, total_uptime_ms: 24_372_000, query_uptime_ms: 20_772_000 });
    expect(s.regions.map((r) => r.name)).toEqual(['lnd-atl', 'lnd-fra', 'lnd-syd', 'lnd-sgp']);
    expect(s.game_modes[0]).toEqual({ name: 'default', lobbies: 3, query_uptime_ms: 16_200_000 });
  });

  it.each([
    [80, TABLE_80],
    [120, TABLE_120],
  ])('--format table at %i columns: short times, names cut and columns left out before an id is cut', (columns, expected) => {
    expect(seen(historyTable(records.map(historyRow), term(columns)), columns)).toBe(expected);
  });

  it('--format table piped: whole ids, RFC 3339 times, milliseconds, - for a running lobby', () => {
    expect(historyTable(records.map(historyRow), pipe)).toBe(TABLE_PIPED);
  });

  it('--format json: the CSV columns with numbers as numbers, null when empty, and RFC 3339 times beside', () => {
    const row = historyJson(records[0]!);
    expect(row).toMatchObject({
      lobby_id: '7a1e5a52-3c0b-4f7e-9d55-0b6f2a9c1e01',
      region_name: 'lnd-atl',
      version_name: '0.0.1',
      start_ts: Date.UTC(2026, 10, 21, 8, 30),
      stop_ts: null,
      total_uptime_ms: 5_400_000,
      query_uptime_ms: 5_400_000,
      start_time: '2026-11-21T08:30:00Z',
      stop_time: null,
    });
    expect(Object.keys(row).slice(0, 14)).toEqual(CSV_HEADER.split(','));
  });
});

describe('CsvStreamParser', () => {
  it('gives the same records whatever the chunking, quotes and multi-byte text included', () => {
    const text = 'a,b,c\r\n"x,1","say ""hi""",é—名\n"multi\nline",,last';
    const bytes = Buffer.from(text);
    for (const size of [1, 2, 3, 7, bytes.length]) {
      const parser = new CsvStreamParser();
      const out: string[][] = [];
      for (let i = 0; i < bytes.length; i += size) out.push(...parser.push(bytes.subarray(i, i + size)));
      out.push(...parser.end());
      expect(out, `chunks of ${size}`).toEqual([['a', 'b', 'c'], ['x,1', 'say "hi"', 'é—名'], ['multi\nline', '', 'last']]);
    }
  });

  const refusal = (text: string | Buffer) => {
    try {
      const parser = new CsvStreamParser();
      parser.push(text);
      parser.end();
    } catch (err) {
      return err instanceof CsvError ? err.message : `not a CsvError: ${err}`;
    }
    return 'accepted';
  };

  it('refuses a row whose field count differs from the header, naming its line', () => {
    expect(refusal('a,b,c\n1,2,3\n"x\ny",2\n')).toBe('line 3: 2 fields, but the header has 3');
    expect(refusal('a,b\n1,2,3\n')).toBe('line 2: 3 fields, but the header has 2');
  });

  it('refuses an unclosed quote, a stray quote and bytes that are not UTF-8', () => {
    expect(refusal('a,b\n1,"open\n2,3\n')).toBe('line 2: a quoted field is never closed');
    expect(refusal('a,b\n1,x"y\n')).toBe('line 2: a quote inside an unquoted field');
    expect(refusal(Buffer.from([0x61, 0x2c, 0x62, 0x0a, 0xff, 0xfe, 0x0a]))).toBe('line 2: not UTF-8 text');
  });

  it('skips empty lines and accepts a last line without a newline', () => {
    expect(readCsv('a,b\r\n\r\n1,2\n\n3,4')).toEqual([['a', 'b'], ['1', '2'], ['3', '4']]);
  });
});

class Screen extends Writable {
  text = '';
  constructor(public columns: number) {
    super();
  }
  readonly isTTY = true;
  override _write(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.text += chunk.toString();
    cb();
  }
}

describe('LiveFrame', () => {
  it('hides the cursor, redraws over the last frame line by line, clears what is left, and restores the cursor', () => {
    const screen = new Screen(20);
    const frame = new LiveFrame(screen);
    frame.draw('one\ntwo\nthree\n');
    frame.draw('uno\ndos\n');
    frame.close();
    expect(screen.text).toBe(
      `${HIDE_CURSOR}one\x1b[K\ntwo\x1b[K\nthree\x1b[K\n\x1b[J` + `\r\x1b[3Auno\x1b[K\ndos\x1b[K\n\x1b[J` + SHOW_CURSOR,
    );
  });

  it('cuts lines to the width, so a long line never wraps and throws the count off', () => {
    const screen = new Screen(10);
    const frame = new LiveFrame(screen);
    frame.draw('0123456789abcdef\n');
    frame.close();
    expect(screen.text).toContain('01234567…\x1b[K\n');
  });

  it('a view taller than the screen loses its lower lines, never the footer', () => {
    const screen = Object.assign(new Screen(40), { rows: 6 });
    const frame = new LiveFrame(screen);
    frame.draw(Array.from({ length: 20 }, (_, i) => `line ${i}`).join('\n') + '\n', 'Every 2 s · Ctrl-C to stop\n');
    frame.close();
    const lines = screen.text.replace(HIDE_CURSOR, '').replace(SHOW_CURSOR, '').split('\x1b[K\n');
    // rows - 1 lines: three of the view, a blank line, the footer.
    expect(lines.slice(0, 5)).toEqual(['line 0', 'line 1', 'line 2', '', 'Every 2 s · Ctrl-C to stop']);
  });

  it('after a resize, the screen is cleared and redrawn rather than moved over by the old line count', () => {
    const screen = new Screen(40);
    const frame = new LiveFrame(screen);
    frame.draw('a line that is long enough to wrap once narrower\n');
    frame.draw('same width: moved over\n');
    screen.columns = 20;
    screen.text = '';
    frame.draw('narrower now\n');
    frame.close();
    expect(screen.text.startsWith('\x1b[H\x1b[2Jnarrower now\x1b[K\n')).toBe(true);
    expect(screen.text).not.toContain('\x1b[1A');
  });

  it('the footer says how often, when, and how to stop', () => {
    expect(plain(watchFooter(term(80), 2000))).toBe('Every 2 s · updated 10:46:15 UTC · Ctrl-C to stop\n');
    expect(plain(watchFooter(term(80), 500))).toBe('Every 0.5 s · updated 10:46:15 UTC · Ctrl-C to stop\n');
  });
});

describe('tables on a narrow terminal', () => {
  it('when even the narrowest columns overflow, lines are cut with … instead of wrapping', () => {
    const head = Array.from({ length: 8 }, (_, i) => `COLUMN${i}`);
    const text = formatTable({ head, rows: [head.map((_, i) => `value-${i}-long`)] }, { tty: true, columns: 40, color: true });
    for (const line of text.trimEnd().split('\n')) {
      expect(visibleWidth(line)).toBe(39);
      expect(plain(line).endsWith('…')).toBe(true);
    }
  });

  it('sizes columns by screen width, so wide characters line up and are not cut early', () => {
    const text = plain(formatTable({ head: ['NAME', 'N'], rows: [['東京', 1], ['lnd-atl', 22]], right: [1] }, { tty: true, columns: 80, color: false }));
    expect(text).toBe('NAME      N\n東京      1\nlnd-atl  22\n');
  });
});
