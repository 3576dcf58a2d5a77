import type { Context } from '../../context.js';
import type { PlayerStatistics } from '../../api/types.js';
import { styler } from '../color.js';
import { renderTable } from '../table.js';

/** Rows of (game mode, region, players), busiest mode first, busiest region first within it. */
export function statsRows(stats: PlayerStatistics): { mode: string; region: string; players: number; modeTotal: number }[] {
  const rows: { mode: string; region: string; players: number; modeTotal: number }[] = [];
  const modes = Object.entries(stats.game_modes).sort((a, b) => b[1].player_count - a[1].player_count || a[0].localeCompare(b[0]));
  for (const [mode, m] of modes) {
    const regions = Object.entries(m.regions).sort((a, b) => b[1].player_count - a[1].player_count || a[0].localeCompare(b[0]));
    for (const [region, r] of regions) rows.push({ mode, region, players: r.player_count, modeTotal: m.player_count });
  }
  return rows;
}

export function renderStats(ctx: Context, stats: PlayerStatistics): string {
  const rows = statsRows(stats);
  const out = ctx.io.stdout;
  if (out.isTTY !== true) {
    // Scripts: one row per (mode, region); the total is the sum.
    return renderTable(ctx, { head: ['GAME MODE', 'REGION', 'PLAYERS'], rows: rows.map((r) => [r.mode, r.region, r.players]) });
  }
  const c = styler(ctx, out);
  let text = `${c.bold('Players in game:')} ${stats.player_count}\n`;
  // People want where the players are: regions without any are left to --json and pipes.
  const busy = rows.filter((r) => r.players > 0);
  if (busy.length === 0) return text + c.dim('No game mode has players yet.') + '\n';
  text += '\n';
  text += renderTable(ctx, {
    head: ['GAME MODE', 'REGION', 'PLAYERS', 'SHARE OF MODE'],
    rows: busy.map((r) => [r.mode, r.region, r.players, r.modeTotal ? `${Math.round((100 * r.players) / r.modeTotal)}%` : '-']),
    right: [2, 3],
  });
  return text;
}
