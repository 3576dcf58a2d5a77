// `stats`: players per game mode and region. People get a table per game mode with a bar for each region's share,
// and in --watch the change since the last refresh; scripts get one tab-separated row per (mode, region).
import type { PlayerStatistics } from '../../api/types.js';
import { formatChange, formatShare, formatTime, maxOf, visibleWidth } from '../format.js';
import { sanitizeLine } from '../sanitize.js';
import { formatTable } from '../table.js';
import { fitBlock, paint, type ViewOptions } from './options.js';

export interface StatsRow {
  mode: string;
  region: string;
  players: number;
  modeTotal: number;
}

const byPlayers = <T extends { player_count: number }>(a: [string, T], b: [string, T]) =>
  b[1].player_count - a[1].player_count || a[0].localeCompare(b[0]);

/** Rows of (game mode, region, players), busiest mode first, busiest region first within it. */
export function statsRows(stats: PlayerStatistics): StatsRow[] {
  const rows: StatsRow[] = [];
  for (const [mode, m] of Object.entries(stats.game_modes).sort(byPlayers)) {
    for (const [region, r] of Object.entries(m.regions).sort(byPlayers)) {
      rows.push({ mode, region, players: r.player_count, modeTotal: m.player_count });
    }
  }
  return rows;
}

export interface StatsViewOptions extends ViewOptions {
  /** The answer at the last refresh: the view shows the change since then (--watch). */
  previous?: PlayerStatistics;
  /** Refreshing in place: the change column is shown even before there is a change. */
  watch?: boolean;
}

const playersIn = (s: PlayerStatistics | undefined, mode: string, region?: string): number => {
  const m = s?.game_modes[mode];
  if (!m) return 0;
  return region === undefined ? m.player_count : (m.regions[region]?.player_count ?? 0);
};

/** A bar of `width` cells for `share` in [0, 1], in eighths of a cell so small differences still show. */
export function shareBar(share: number, width: number): string {
  const eighths = Math.round(Math.min(1, Math.max(0, share)) * width * 8);
  const partial = eighths % 8;
  return '█'.repeat(Math.floor(eighths / 8)) + (partial ? ' ▏▎▍▌▋▊▉'[partial]! : '');
}

export function formatStats(stats: PlayerStatistics, o: StatsViewOptions): string {
  if (!o.tty) {
    // Scripts: one row per (mode, region); the total is the sum.
    return formatTable({ head: ['GAME MODE', 'REGION', 'PLAYERS'], rows: statsRows(stats).map((r) => [r.mode, r.region, r.players]) }, o);
  }
  const c = paint(o);
  const change = (delta: number) => {
    const text = formatChange(delta);
    return delta > 0 ? c.green(text) : delta < 0 ? c.red(text) : text;
  };
  const showChange = o.watch === true || o.previous !== undefined;
  const totalDelta = o.previous ? stats.player_count - o.previous.player_count : 0;
  let text = `${c.bold('Players in game:')} ${stats.player_count}${totalDelta ? `  ${change(totalDelta)}` : ''}\n`;

  // People want where the players are: empty modes and regions are left to --json and pipes, unless they just
  // emptied, so a watcher sees the −1.
  const modes = [...new Set([...Object.keys(stats.game_modes), ...Object.keys(o.previous?.game_modes ?? {})])]
    .map((mode) => ({ mode, players: playersIn(stats, mode), before: playersIn(o.previous, mode) }))
    .filter((m) => m.players > 0 || m.before > 0)
    .sort((a, b) => b.players - a.players || a.mode.localeCompare(b.mode));
  if (modes.length === 0) return fitBlock(text + c.dim('No game mode has players yet.') + '\n', o);

  for (const m of modes) {
    const regionNames = new Set([
      ...Object.keys(stats.game_modes[m.mode]?.regions ?? {}),
      ...Object.keys(o.previous?.game_modes[m.mode]?.regions ?? {}),
    ]);
    const regions = [...regionNames]
      .map((region) => ({ region, players: playersIn(stats, m.mode, region), before: playersIn(o.previous, m.mode, region) }))
      .filter((r) => r.players > 0 || r.before > 0)
      .sort((a, b) => b.players - a.players || a.region.localeCompare(b.region));

    const of = stats.player_count > 0 ? c.dim(` (${formatShare(m.players, stats.player_count)} of all)`) : '';
    const modeDelta = o.previous ? m.players - m.before : 0;
    text += `\n${c.bold(sanitizeLine(m.mode))}  ${m.players} player${m.players === 1 ? '' : 's'}${of}`;
    text += `${modeDelta ? `  ${change(modeDelta)}` : ''}\n`;

    // The bar takes what the other columns leave, within reason.
    const regionWidth = maxOf(regions.map((r) => visibleWidth(sanitizeLine(r.region))), 6);
    const playersWidth = maxOf(regions.map((r) => String(r.players).length), 7);
    const changeWidth = showChange ? 2 + maxOf(regions.map((r) => formatChange(r.players - r.before).length), 6) : 0;
    const barWidth = Math.max(5, Math.min(30, o.columns - 1 - 2 - regionWidth - 2 - playersWidth - 2 - 5 - changeWidth));
    const head = ['REGION', 'PLAYERS', 'SHARE'];
    if (showChange) head.push('CHANGE');
    const rows = regions.map((r) => {
      const share = m.players > 0 ? r.players / m.players : 0;
      const cell = `${c.cyan(shareBar(share, barWidth).padEnd(barWidth))} ${formatShare(r.players, m.players).padStart(4)}`;
      const row: (string | number)[] = [r.region, r.players, cell];
      if (showChange) row.push(o.previous ? change(r.players - r.before) : '');
      return row;
    });
    const table = formatTable({ head, rows, right: showChange ? [1, 3] : [1] }, { ...o, columns: o.columns - 2 });
    text += table.replace(/^(?=.)/gm, '  ');
  }
  return fitBlock(text, o);
}

/**
 * For a script watching statistics: `time<TAB>mode<TAB>region<TAB>players<TAB>change` for each row that changed
 * since `previous` (every row the first time, its change counted from zero). Changes use ASCII signs.
 */
export function statsChangeLines(stats: PlayerStatistics, previous: PlayerStatistics | undefined, observedAt: number): string {
  const at = formatTime(observedAt, { local: false });
  const rows = statsRows(stats);
  // A mode or region that left the answer counts as dropping to zero.
  if (previous) {
    for (const r of statsRows(previous)) {
      if (stats.game_modes[r.mode]?.regions[r.region] === undefined) rows.push({ ...r, players: 0 });
    }
  }
  let text = '';
  for (const r of rows) {
    const delta = r.players - playersIn(previous, r.mode, r.region);
    if (previous && delta === 0) continue;
    text += `${at}\t${sanitizeLine(r.mode)}\t${sanitizeLine(r.region)}\t${r.players}\t${delta >= 0 ? '+' : '-'}${Math.abs(delta)}\n`;
  }
  return text;
}
