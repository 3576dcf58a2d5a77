import type { Context } from '../context.js';
import type { ApiClient } from '../api/client.js';
import type { PlayerStatistics } from '../api/types.js';
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

async function run(ctx: Context, o: StatsOptions): Promise<void> {
  const [{ getStatistics }, { writeJson }] = await Promise.all([import('../api/operations.js'), import('../output/json.js')]);
  const api = await ctx.api();
  if (o.watchMs !== undefined) return watch(ctx, api, o, o.watchMs);
  const [stats, { formatStats }, { viewOptions }] = await Promise.all([
    getStatistics(api),
    import('../output/views/stats.js'),
    import('../output/views/options.js'),
  ]);
  if (ctx.global.json) return writeJson(ctx, stats);
  ctx.io.stdout.write(formatStats(stats, viewOptions(ctx, ctx.io.stdout, o.utc)));
}

/** Refreshes until Ctrl-C: redrawn in place on a terminal, changed rows on a pipe, changed bodies with --json. */
async function watch(ctx: Context, api: ApiClient, o: StatsOptions, everyMs: number): Promise<void> {
  const [{ getStatistics }, { sleep }, { jsonLine }, { LiveFrame, watchFooter }, { formatStats, statsChangeLines }, { viewOptions }] = await Promise.all([
    import('../api/operations.js'),
    import('../api/retry.js'),
    import('../output/json.js'),
    import('../output/views/live.js'),
    import('../output/views/stats.js'),
    import('../output/views/options.js'),
  ]);
  const out = ctx.io.stdout;
  const frame = out.isTTY === true && !ctx.global.json ? new LiveFrame(out) : undefined;
  let previous: PlayerStatistics | undefined;
  try {
    for (;;) {
      const stats = await getStatistics(api);
      if (frame) {
        const view = viewOptions(ctx, out, o.utc);
        frame.draw(formatStats(stats, { ...view, previous, watch: true }) + '\n' + watchFooter(view, everyMs));
      } else if (ctx.global.json) {
        if (JSON.stringify(stats) !== JSON.stringify(previous)) out.write(jsonLine(stats));
      } else {
        out.write(statsChangeLines(stats, previous, ctx.now()));
      }
      previous = stats;
      await sleep(everyMs, ctx.signal);
    }
  } finally {
    frame?.close();
  }
}
