// `gamehost region list`: the regions lobbies can run in, with their display names.
import type { Context } from '../../context.js';
import { listRegions } from '../../api/operations.js';
import { writeJsonText } from '../../output/json.js';
import { sanitizeLine } from '../../output/sanitize.js';
import { defineCommand } from '../command.js';

export default defineCommand({
  summary: 'List the regions lobbies can run in',
  options: [],
  notes: 'Piped: tab-separated rows; with -q, the region ids alone (what --region takes).',
  examples: ['gamehost region list', 'gamehost region list -q   # in CI: every region id'],
  parse(): Record<string, never> {
    return {};
  },
  run,
});

async function run(ctx: Context): Promise<void> {
  const { value, text } = await listRegions(await ctx.api());
  if (ctx.global.json) return writeJsonText(ctx, text);
  if (ctx.global.quiet) return void ctx.io.stdout.write(value.regions.map((r) => `${sanitizeLine(r.region_id)}\n`).join(''));
  const { renderRegions } = await import('../../output/views/lobbies.js');
  ctx.io.stdout.write(renderRegions(ctx, value));
}
