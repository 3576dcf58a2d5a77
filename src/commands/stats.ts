import type { Context } from '../context.js';
import { getStatistics } from '../api/operations.js';
import { writeJson } from '../output/json.js';
import { renderStats } from '../output/views/stats.js';

export type StatsOptions = Record<string, never>;

export function parse(): StatsOptions {
  return {};
}

export async function run(ctx: Context, _options: StatsOptions): Promise<void> {
  const stats = await getStatistics(await ctx.api());
  if (ctx.global.json) return writeJson(ctx, stats);
  ctx.io.stdout.write(renderStats(ctx, stats));
}
