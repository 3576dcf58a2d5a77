// `gamehost version show <version>`: a version and its config as the service normalised it (every game mode with
// what it inherited), by name or id.
import type { Context } from '../../context.js';
import { defineCommand } from '../command.js';

export default defineCommand({
  operands: ['<version>'],
  summary: 'Show a version and its config as the service holds it (by name or id)',
  notes: "Prints the version, then its config as indented JSON. --json prints the service's answer as it is.",
  examples: ['gamehost version show 2026.12.02-1', "gamehost version show \"$VERSION_ID\" --json | jq '.version.config.matchmaker.game_modes | keys'   # in CI"],
  parse: (v) => ({ version: v.version }),
  run,
});

async function run(ctx: Context, o: { version: string }): Promise<void> {
  const [{ getVersion }, { readGame, findVersion }, { writeJsonText }] = await Promise.all([
    import('../../api/operations.js'),
    import('../../api/resolve.js'),
    import('../../output/json.js'),
  ]);
  const api = await ctx.api();
  const game = await readGame(api);
  const found = findVersion(game, o.version);
  const answer = await getVersion(api, found.version_id);
  if (ctx.global.json) return writeJsonText(ctx, answer.text);
  const v = answer.value?.version;
  const [{ renderRecord }, { sanitizeLine }] = await Promise.all([import('../../output/record.js'), import('../../output/sanitize.js')]);
  const runs = (Array.isArray(game?.namespaces) ? game.namespaces : []).filter((n) => n?.version_id === found.version_id).map((n) => String(n.name_id));
  ctx.io.stdout.write(
    renderRecord(ctx, [
      { label: 'Version', key: 'display_name', value: found.display_name },
      { label: 'Version id', key: 'version_id', value: found.version_id },
      { label: 'Created', key: 'create_ts', value: typeof v?.create_ts === 'string' ? v.create_ts : '-' },
      { label: 'Deployed to', key: 'namespaces', value: runs.join(', ') || '-' },
    ]),
  );
  // The config as JSON, each line cleaned of control characters (a spec-valid string may hold any).
  const config = JSON.stringify(v?.config ?? {}, null, 2);
  ctx.io.stdout.write(config.split('\n').map((line) => sanitizeLine(line)).join('\n') + '\n');
}
