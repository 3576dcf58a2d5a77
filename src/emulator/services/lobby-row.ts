// A new lobby's record: what its version, game mode and region make it, beside what the config and the runner give
// every lobby. Matchmaking (find, create) and the idle lobbies make lobbies from it.
import { randomUUID } from 'node:crypto';
import type { EmulatorConfig } from '../config.js';
import { NOT_READY, type LobbyRow, type Store } from '../stores/store.js';
import type { LobbyServerRunner } from './capacity.js';
import type { Clock } from './clock.js';
import type { Game } from './games.js';
import type { LobbyVersions, RunningVersion } from './lobby-versions.js';
import { newLobbyPorts } from './ports.js';
import type { GameModeConfig } from './version-config.js';

export interface MatchmakingDeps {
  store: Store;
  clock: Clock;
  config: EmulatorConfig;
  secret: Buffer;
  /** What runs lobbies' servers, in readiness `run`: each lobby created here starts in a place of it. */
  runner?: LobbyServerRunner;
  lobbyVersions: LobbyVersions;
}

/** What a new lobby is made of, beside what the config and the runner give every lobby. */
export interface NewLobby {
  version: RunningVersion;
  gameMode: GameModeConfig;
  region: { id: string; name: string };
  maxPlayers: number | undefined;
  publicity: 'public' | 'private';
  tags: Record<string, string>;
  lobbyConfig: unknown;
  autoCreated: boolean;
}

/** A new lobby's row (not yet written): what find, create and the idle update make. */
export async function newLobbyRow(deps: MatchmakingDeps, game: Game, now: number, l: NewLobby): Promise<LobbyRow> {
  const { config, runner } = deps;
  const lobbyId = randomUUID();
  // A server this emulator runs starts now (its lines and its exit count from here, however short its life).
  const startTs = runner === undefined ? now + config.startDelayMs : now;
  // A lobby whose server calls ready: started by hand (manual) or by the emulator (run).
  const manual = config.readiness !== 'delay';
  const readyTs = manual ? NOT_READY : startTs + config.readyDelayMs;
  const idle = config.idleLifetimeMs > 0 ? config.idleLifetimeMs : null;
  const ports = await newLobbyPorts(lobbyId, deps.lobbyVersions.portSettings(l.gameMode));
  return {
    lobby_id: lobbyId,
    namespace_id: game.namespaceId,
    version_id: l.version.versionId,
    game_mode: l.gameMode.nameId,
    region_id: l.region.id,
    region_name: l.region.name,
    // Find counts against the normal count, join against the direct one; a find's or create's own max_players sets
    // both (SERVICE-FACTS, dynamic max_players), the party count stays the game mode's.
    max_players: l.maxPlayers ?? l.gameMode.maxPlayers,
    max_players_direct: l.maxPlayers ?? l.gameMode.maxPlayersDirect,
    max_players_party: l.gameMode.maxPlayersParty,
    publicity: l.publicity,
    tags: JSON.stringify(l.tags),
    lobby_config: l.lobbyConfig === undefined ? null : JSON.stringify(l.lobbyConfig),
    create_ts: now,
    start_ts: startTs,
    ready_ts: readyTs,
    stop_ts: null,
    exit_code: null,
    failed: null,
    idle_lifetime_ms: idle,
    idle_stop_ts: idle === null || manual ? null : readyTs + idle,
    ports: JSON.stringify(ports),
    auto_created: l.autoCreated ? 1 : 0,
    is_closed: 0,
    state: null,
    ready_deadline_ts: manual ? now + config.readyWindowMs : null,
    player_count: 1,
    owner: runner?.owner.replica ?? null,
    owner_pid: runner?.owner.pid ?? null,
    owner_start: runner?.owner.start ?? null,
    server_pid: null,
    server_start: null,
    // Its version's idle lobbies of the game mode in the region: it stays up idle when emptied while fewer are.
    idle_max: l.gameMode.regions.find((r) => r.nameId === l.region.id)?.idleLobbies.max ?? 0,
    idle_ts: null,
  };
}
