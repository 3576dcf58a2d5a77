// The cloud game (cloud_games_getGameById): the one game the emulator hosts, its namespace and version, and the
// regions lobbies run in, which is how a client turns a lobby's region UUID into a name.
import { GAME_ID, NAMESPACE_ID, NAMESPACE_NAME, VERSION_ID, VERSION_NAME, regionUuid, stableUuid } from '../services/ids.js';
import type { Reply, RequestContext } from './context.js';
import { authorization } from './request.js';

/** When the emulated game "was created": fixed, so answers are the same from one run to the next. */
const CREATED = '2024-01-01T00:00:00.000Z';

export async function getGame(rc: RequestContext): Promise<Reply> {
  const { auth, config, statistics } = rc.services;
  auth.cloud(authorization(rc), rc.params.game_id);
  // `watch_index` asks the service to hold the answer until the game changes; the emulator never holds one:
  // every answer comes at once, as index 0.
  const { player_count: players } = await statistics.players('public', false);
  const game = {
    game_id: GAME_ID,
    create_ts: CREATED,
    name_id: 'game',
    display_name: 'Emulated game',
    developer_group_id: stableUuid('group', 'developer'),
    total_player_count: players,
    namespaces: [{ namespace_id: NAMESPACE_ID, create_ts: CREATED, display_name: NAMESPACE_NAME, version_id: VERSION_ID, name_id: NAMESPACE_NAME }],
    versions: [{ version_id: VERSION_ID, create_ts: CREATED, display_name: VERSION_NAME }],
    available_regions: config.regions.map((r) => ({
      region_id: regionUuid(r.id),
      region_name_id: r.id,
      provider: 'emulator',
      universal_region: 'unknown',
      provider_display_name: 'gamehost emulator',
      region_display_name: r.name,
    })),
  };
  return { status: 200, json: { game, watch: { index: '0' } } };
}
