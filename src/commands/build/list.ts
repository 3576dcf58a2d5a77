// `gamehost build list`: the game's builds on the service (listGameBuilds), newest first.
import type { Context } from '../../context.js';
import { defineCommand } from '../command.js';

export interface BuildListOptions {
  /** Every column at full width (--wide). */
  wide: boolean;
}

export default defineCommand({
  summary: "List the game's builds: id, tag, size, state, created",
  options: [{ flags: '--wide', description: 'every column at full width, none left out' }],
  notes: 'With -q, prints the build ids alone, one a line, newest first. --json prints the service\'s answer as it is.',
  examples: [
    'gamehost build list',
    'gamehost build list --json | jq -r \'.builds[] | select(.complete) | .build_id\'   # in CI',
    'gamehost build list -q | head -1   # the newest build id',
  ],
  parse: (v): BuildListOptions => ({ wide: v.wide }),
  run,
});

async function run(ctx: Context, o: BuildListOptions): Promise<void> {
  const [{ listBuilds }, { writeJsonText }] = await Promise.all([import('../../api/operations.js'), import('../../output/json.js')]);
  const answer = await listBuilds(await ctx.api());
  if (ctx.global.json) return writeJsonText(ctx, answer.text);
  // Newest first, whatever order the service answered in; an answer without a list is an empty one.
  const builds = [...(Array.isArray(answer.value?.builds) ? answer.value.builds : [])].sort((a, b) => String(b?.create_ts ?? '').localeCompare(String(a?.create_ts ?? '')));
  if (ctx.global.quiet) {
    const { sanitizeLine } = await import('../../output/sanitize.js');
    return void ctx.io.stdout.write(builds.filter((b) => typeof b?.build_id === 'string').map((b) => sanitizeLine(b.build_id) + '\n').join(''));
  }
  const [{ formatBuildSummaries }, { viewOptions }] = await Promise.all([import('../../output/views/build.js'), import('../../output/views/options.js')]);
  ctx.io.stdout.write(formatBuildSummaries(builds, { ...viewOptions(ctx, ctx.io.stdout, false), wide: o.wide }));
}
