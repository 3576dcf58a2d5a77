// `gamehost namespace config <namespace>`: its matchmaker bounds; with --lobby-count-max or --max-players-per-client,
// sets them (the service takes both at once: the one not given keeps its value).
import type { Context } from '../../context.js';
import { integer } from '../args.js';
import { defineCommand } from '../command.js';

interface ConfigOptions {
  namespace: string;
  lobbyCountMax?: number;
  maxPlayers?: number;
}

export default defineCommand({
  operands: ['<namespace>'],
  summary: "Show a namespace's matchmaker bounds, or set them",
  options: [
    { flags: '--lobby-count-max <n>', description: 'set the most lobbies the namespace holds at once (1-32767)', value: integer({ min: 1, max: 32767 }) },
    { flags: '--max-players-per-client <n>', description: 'set the most players one address may hold (every per-client bound)', value: integer({ min: 1, max: 1_000_000 }) },
  ],
  notes: "Prints the namespace, the version it runs and its bounds. --json prints the service's answer as it is (after a change, as read back).",
  examples: ['gamehost namespace config prod', 'gamehost namespace config staging --lobby-count-max 16 --max-players-per-client 2', 'gamehost namespace config prod --json | jq .namespace.config.matchmaker   # in CI'],
  parse: (v): ConfigOptions => ({ namespace: v.namespace, lobbyCountMax: v.lobbyCountMax, maxPlayers: v.maxPlayersPerClient }),
  run,
});

async function run(ctx: Context, o: ConfigOptions): Promise<void> {
  const [{ getNamespace, setNamespaceMatchmakerConfig }, { readGame, findNamespace }] = await Promise.all([import('../../api/operations.js'), import('../../api/resolve.js')]);
  const api = await ctx.api();
  const game = await readGame(api);
  const id = findNamespace(game, o.namespace).namespace_id;
  let answer = await getNamespace(api, id);
  if (o.lobbyCountMax !== undefined || o.maxPlayers !== undefined) {
    const mm = answer.value?.namespace?.config?.matchmaker ?? {};
    const current = (v: unknown, fallback: number) => (typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : fallback);
    await setNamespaceMatchmakerConfig(api, id, {
      lobby_count_max: o.lobbyCountMax ?? current(mm.lobby_count_max, 128),
      max_players: o.maxPlayers ?? current(mm.max_players_per_client, 8),
    });
    answer = await getNamespace(api, id);
  }
  const { writeJsonText } = await import('../../output/json.js');
  if (ctx.global.json) return writeJsonText(ctx, answer.text);
  const ns = answer.value?.namespace;
  const mm = ns?.config?.matchmaker ?? {};
  const [{ renderRecord }, { versionNames }] = await Promise.all([import('../../output/record.js'), import('../../output/views/config.js')]);
  const shown = (v: unknown) => (typeof v === 'string' || typeof v === 'number' ? v : '-');
  ctx.io.stdout.write(
    renderRecord(ctx, [
      { label: 'Namespace', key: 'name_id', value: shown(ns?.name_id) },
      { label: 'Namespace id', key: 'namespace_id', value: shown(ns?.namespace_id) },
      { label: 'Version', key: 'version', value: versionNames(game)(ns?.version_id) },
      { label: 'Version id', key: 'version_id', value: shown(ns?.version_id) },
      { label: 'Lobbies at most', key: 'lobby_count_max', value: shown(mm.lobby_count_max) },
      { label: 'Players per client', key: 'max_players_per_client', value: shown(mm.max_players_per_client) },
    ]),
  );
}
