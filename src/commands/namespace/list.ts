// `gamehost namespace list`: the game's namespaces and the version each runs.
import type { Context } from '../../context.js';
import { defineCommand } from '../command.js';

export default defineCommand({
  summary: "List the game's namespaces and the version each runs",
  notes: "Piped: tab-separated rows (name id, display name, version, namespace id, version id, created); with -q, the name ids alone. --json prints the service's answer of the game as it is.",
  examples: ['gamehost namespace list', "gamehost namespace list --json | jq -r '.game.namespaces[] | [.name_id, .version_id] | @tsv'   # in CI"],
  parse: () => ({}),
  run,
});

async function run(ctx: Context): Promise<void> {
  const [{ getGameText }, { writeJsonText }] = await Promise.all([import('../../api/operations.js'), import('../../output/json.js')]);
  const answer = await getGameText(await ctx.api());
  if (ctx.global.json) return writeJsonText(ctx, answer.text);
  const { namespacesOf } = await import('../../api/resolve.js');
  if (ctx.global.quiet) {
    const { sanitizeLine } = await import('../../output/sanitize.js');
    return void ctx.io.stdout.write(namespacesOf(answer.value?.game).map((n) => sanitizeLine(n.name_id) + '\n').join(''));
  }
  const [{ formatNamespaces }, { viewOptions }] = await Promise.all([import('../../output/views/config.js'), import('../../output/views/options.js')]);
  ctx.io.stdout.write(formatNamespaces(answer.value?.game, viewOptions(ctx, ctx.io.stdout, false)));
}
