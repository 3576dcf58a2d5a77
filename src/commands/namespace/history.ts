// `gamehost namespace history <namespace>`: the versions deployed to it, newest first.
import type { Context } from '../../context.js';
import { integer } from '../args.js';
import { defineCommand } from '../command.js';

export default defineCommand({
  operands: ['<namespace>'],
  summary: 'List the versions deployed to a namespace, newest first',
  options: [{ flags: '--limit <n>', description: 'at most this many deploys (1-1000)', default: '32', value: integer({ min: 1, max: 1000 }) }],
  notes: "Piped: tab-separated rows (deployed, version, version id); with -q, the version ids alone. --json prints the service's answer as it is.",
  examples: ['gamehost namespace history prod', 'gamehost namespace history prod --limit 2 -q | tail -1   # in CI: the version before the current one'],
  parse: (v) => ({ namespace: v.namespace, limit: v.limit }),
  run,
});

async function run(ctx: Context, o: { namespace: string; limit: number }): Promise<void> {
  const [{ namespaceHistory }, { readGame, findNamespace }, { writeJsonText }] = await Promise.all([
    import('../../api/operations.js'),
    import('../../api/resolve.js'),
    import('../../output/json.js'),
  ]);
  const api = await ctx.api();
  const game = await readGame(api);
  const answer = await namespaceHistory(api, findNamespace(game, o.namespace).namespace_id, o.limit);
  if (ctx.global.json) return writeJsonText(ctx, answer.text);
  const deploys = Array.isArray(answer.value?.versions) ? answer.value.versions : [];
  if (ctx.global.quiet) {
    const { sanitizeLine } = await import('../../output/sanitize.js');
    return void ctx.io.stdout.write(deploys.filter((d) => typeof d?.version_id === 'string').map((d) => sanitizeLine(d.version_id) + '\n').join(''));
  }
  const [{ formatHistory }, { viewOptions }] = await Promise.all([import('../../output/views/config.js'), import('../../output/views/options.js')]);
  ctx.io.stdout.write(formatHistory(answer.value, game, viewOptions(ctx, ctx.io.stdout, false)));
}
