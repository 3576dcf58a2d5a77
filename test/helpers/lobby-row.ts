// A lobby record as the store keeps it, for the tests that write one directly (what another replica, an older
// version or a racing call left): a running, ready lobby of the default version holding one player, then `over`.
import { randomUUID } from 'node:crypto';
import { VERSION_ID } from '../../src/emulator/services/ids.js';
import type { LobbyRow } from '../../src/emulator/stores/store.js';

export function lobbyRow(over: Partial<LobbyRow> & Pick<LobbyRow, 'namespace_id'>, now = Date.now()): LobbyRow {
  // One count for find, join and parties unless told otherwise, as a game mode that sets only max_players has.
  const max = over.max_players ?? 8;
  return {
    lobby_id: randomUUID(),
    game_mode: 'default',
    region_id: 'lnd-atl',
    region_name: 'Atlanta',
    max_players: max,
    max_players_direct: max,
    max_players_party: max,
    publicity: 'public',
    tags: '{}',
    lobby_config: null,
    create_ts: now,
    start_ts: now,
    ready_ts: now,
    stop_ts: null,
    exit_code: null,
    failed: null,
    idle_lifetime_ms: null,
    idle_stop_ts: null,
    ports: '{}',
    auto_created: 0,
    is_closed: 0,
    state: null,
    ready_deadline_ts: null,
    player_count: 1,
    owner: null,
    owner_pid: null,
    owner_start: null,
    server_pid: null,
    server_start: null,
    version_id: VERSION_ID,
    idle_max: 0,
    idle_ts: null,
    ...over,
  };
}
