import type { Context } from '../context.js';
import { getStatistics } from '../api/operations.js';
import { writeJsonText } from '../output/json.js';
import { viewOptions } from '../output/views/options.js';
import { formatStats, statsChangeLines } from '../output/views/stats.js';
import { parseSeconds } from './args.js';
import { watch } from './watch.js';

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

export function parse(_args: string[] = [], opts: Record<string, unknown> = {}): StatsOptions {
  const w = opts.watch;
  const watchMs = w === undefined || w === false ? undefined : w === true ? DEFAULT_WATCH_MS : parseSeconds('--watch', w);
  return { watchMs, utc: opts.utc === true };
}

export async function run(ctx: Context, o: StatsOptions): Promise<number | void> {
  const api = await ctx.api();
  if (o.watchMs !== undefined) {
    // Refreshes until Ctrl-C, showing the change since the last refresh.
    return watch(ctx, {
      everyMs: o.watchMs,
      utc: o.utc,
      poll: () => getStatistics(api),
      frame: (stats, previous, view) => formatStats(stats, { ...view, previous, watch: true }),
      lines: statsChangeLines,
    });
  }
  const { value, text } = await getStatistics(api);
  if (ctx.global.json) return writeJsonText(ctx, text);
  ctx.io.stdout.write(formatStats(value, viewOptions(ctx, ctx.io.stdout, o.utc)));
}
