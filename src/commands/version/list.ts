// `gamehost version list`: the game's versions, newest first, and the namespaces each is deployed to.
import type { Context } from '../../context.js';
import { defineCommand } from '../command.js';

export default defineCommand({
  summary: "List the game's versions, newest first, with the namespaces that run each",
  notes: "Piped: tab-separated rows (name, version id, namespaces, created); with -q, the version ids alone. --json prints the service's answer of the game as it is.",
  examples: ['gamehost version list', 'gamehost version list -q | head -1   # in CI: the newest version id'],
  parse: () => ({}),
  run,
});

async function run(ctx: Context): Promise<void> {
  const [{ getGameText }, { writeJsonText }] = await Promise.all([import('../../api/operations.js'), import('../../output/json.js')]);
  const answer = await getGameText(await ctx.api());
  if (ctx.global.json) return writeJsonText(ctx, answer.text);
  if (ctx.global.quiet) {
    const [{ versionsOf }, { sanitizeLine }] = await Promise.all([import('../../api/resolve.js'), import('../../output/sanitize.js')]);
    return void ctx.io.stdout.write([...versionsOf(answer.value?.game)].reverse().map((v) => sanitizeLine(v.version_id) + '\n').join(''));
  }
  const [{ formatVersions }, { viewOptions }] = await Promise.all([import('../../output/views/config.js'), import('../../output/views/options.js')]);
  ctx.io.stdout.write(formatVersions(answer.value?.game, viewOptions(ctx, ctx.io.stdout, false)));
}
