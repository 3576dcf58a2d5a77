// `gamehost namespace set-version <namespace> <version>`: deploys a version the game has to a namespace.
import type { Context } from '../../context.js';
import { defineCommand } from '../command.js';

export default defineCommand({
  writes: true,
  operands: ['<namespace>', '<version>'],
  summary: 'Deploy a version the game has to a namespace (by name or id)',
  notes:
    "New finds land in the version's game modes at once; the old version's idle lobbies stop and occupied ones run until they empty. " +
    'Setting the version a namespace already runs changes nothing. With -q, prints nothing.',
  examples: ['gamehost namespace set-version staging 2026.12.02-1', 'gamehost namespace set-version prod "$(gamehost namespace config staging --json | jq -r .namespace.version_id)"   # in CI: promote staging'],
  parse: (v) => ({ namespace: v.namespace, version: v.version }),
  run,
});

async function run(ctx: Context, o: { namespace: string; version: string }): Promise<void> {
  const [{ setNamespaceVersion }, { readGame, findNamespace, findVersion }] = await Promise.all([import('../../api/operations.js'), import('../../api/resolve.js')]);
  const api = await ctx.api();
  const game = await readGame(api);
  const ns = findNamespace(game, o.namespace);
  const version = findVersion(game, o.version);
  const before = ns.version_id;
  await setNamespaceVersion(api, ns.namespace_id, version.version_id);
  const result = { namespace_id: ns.namespace_id, name_id: ns.name_id, version_id: version.version_id, display_name: version.display_name, changed: before !== version.version_id };
  if (ctx.global.json) {
    const { writeJson } = await import('../../output/json.js');
    return writeJson(ctx, result);
  }
  if (ctx.global.quiet) return;
  const { sanitizeLine } = await import('../../output/sanitize.js');
  const what = `${sanitizeLine(ns.name_id)} runs ${sanitizeLine(version.display_name)}`;
  ctx.io.stdout.write(result.changed ? `Deployed: ${what}\n` : `Unchanged: ${what} already\n`);
}
