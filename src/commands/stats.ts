import type { Context } from '../context.js';
import { milliseconds } from './args.js';
import { defineCommand } from './command.js';

/**
 * Statistics have no end to wait for, so a watch runs until Ctrl-C: every 10 s keeps it inside the service's
 * GET budget (128 per 15 minutes) with room for other calls.
 */
export const DEFAULT_WATCH_MS = 10_000;

export interface StatsOptions {
  /** Refresh every this many ms; undefined: once. */
  watchMs?: number;
  utc: boolean;
}

export default defineCommand({
  summary: 'Show player statistics: total, per game mode and per region',
  options: [
    { flags: '--watch [seconds]', description: 'refresh every few seconds (default: 10) and show the change since the last refresh', value: milliseconds },
    { flags: '--utc', description: 'show times in UTC instead of the local zone' },
  ],
  examples: ['gamehost stats', 'gamehost stats --watch 5', 'gamehost stats --json | jq .player_count   # in CI'],
  parse: (v): StatsOptions => ({ watchMs: v.watch === true ? DEFAULT_WATCH_MS : v.watch, utc: v.utc }),
  run,
});

async function run(ctx: Context, o: StatsOptions): Promise<number | void> {
  const [{ getStatistics }, { writeJsonText }] = await Promise.all([import('../api/operations.js'), import('../output/json.js')]);
  // --json prints the service's text as it came: the views (tables, colour) are not even loaded.
  const views = () => Promise.all([import('../output/views/stats.js'), import('../output/views/options.js')]);
  const api = await ctx.api();
  if (o.watchMs !== undefined) {
    const [[{ formatStats, statsChangeLines }], { watch }] = await Promise.all([views(), import('./watch.js')]);
    // Refreshes until Ctrl-C, showing the change since the last refresh.
    return watch(ctx, {
      everyMs: o.watchMs,
      utc: o.utc,
      poll: () => getStatistics(api),
      frame: (stats, previous, view) => formatStats(stats, { ...view, previous, watch: true }),
      lines: statsChangeLines,
    });
  }
  if (ctx.global.json) return writeJsonText(ctx, (await getStatistics(api)).text);
  const [{ value }, [{ formatStats }, { viewOptions }]] = await Promise.all([getStatistics(api), views()]);
  ctx.io.stdout.write(formatStats(value, viewOptions(ctx, ctx.io.stdout, o.utc)));
}
