// Lobbies: create (with the production order of checks), the logs view of one lobby, players joining, the stop.
import { randomUUID } from 'node:crypto';
import type { EmulatorConfig } from '../config.js';
import { fail } from '../errors.js';
import type { LobbyRow, Store } from '../stores/store.js';
import type { Clock } from './clock.js';
import type { Game } from './games.js';
import { lobbyMetrics, type JobMetrics } from './metrics.js';
import { signPlayerToken } from './tokens.js';

export const DEFAULT_MAX_PLAYERS = 32;
export const MAX_PLAYERS_LIMIT = 256;
const MAX_TAGS = 8;
const MAX_TAG_NAME_BYTES = 128;
const MAX_TAG_VALUE_BYTES = 512;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';

/** A lobby create as the client asked for it, its shape already checked. */
export interface LobbyRequest {
  gameMode: string;
  regionId: string | undefined;
  maxPlayers: number | undefined;
  publicity: 'public' | 'private';
  tags: Record<string, string>;
  lobbyConfig: unknown;
}

/** A player in a lobby: the answer to a create. */
export interface LobbySeat {
  lobbyId: string;
  region: { id: string; name: string };
  playerToken: string;
}

/** A lobby as seen at `now`; metrics once it has started, up to its stop. */
export interface LobbyState {
  lobby: LobbyRow;
  now: number;
  metrics?: JobMetrics;
}

export interface StoppedLobby extends LobbyState {
  /** The lobby had stopped before this call, which then changed nothing. */
  alreadyStopped: boolean;
}

export interface StopOptions {
  exitCode?: number;
  failed?: boolean;
}

export interface JoinedPlayer {
  lobbyId: string;
  playerToken: string;
  players: number;
  maxPlayers: number;
}

export interface LobbyDeps {
  store: Store;
  clock: Clock;
  config: EmulatorConfig;
  secret: Buffer;
}

export class Lobbies {
  constructor(private readonly deps: LobbyDeps) {}

  /**
   * Checks in the production order (game mode, tags, max players, region) against the game's own game modes and
   * regions, then creates in its namespace, or mocks for `dev`.
   */
  async create(game: Game, mode: 'public' | 'dev', request: LobbyRequest): Promise<LobbySeat> {
    const { config, secret, store } = this.deps;
    const now = this.deps.clock.now();
    if (!game.gameModes.includes(request.gameMode))
      fail('MATCHMAKER_GAME_MODE_NOT_FOUND', { game_mode: request.gameMode, known: nameList(game.gameModes) });
    const tagNames = Object.keys(request.tags);
    if (tagNames.length > MAX_TAGS) fail('MATCHMAKER_TOO_MANY_TAGS', { count: tagNames.length });
    // Production measures tag lengths in bytes (Rust String::len).
    for (const name of tagNames) {
      if (Buffer.byteLength(name) > MAX_TAG_NAME_BYTES) fail('MATCHMAKER_TAG_NAME_TOO_LONG');
      if (Buffer.byteLength(request.tags[name]!) > MAX_TAG_VALUE_BYTES) fail('MATCHMAKER_TAG_TOO_LONG', { name });
    }
    const { maxPlayers, regionId } = request;
    if (maxPlayers !== undefined && (maxPlayers < 1 || maxPlayers > MAX_PLAYERS_LIMIT))
      fail('MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID', { max: MAX_PLAYERS_LIMIT });
    // No geo-location here: "closest region" is the first configured one.
    const region = regionId === undefined ? game.regions[0]! : game.regions.find((r) => r.id === regionId);
    if (region === undefined)
      fail('MATCHMAKER_REGION_NOT_FOUND', { region: regionId ?? '', known: nameList(game.regions.map((r) => `${r.id} (${r.name})`)) });

    const playerId = randomUUID();
    const iat = Math.floor(now / 1000);
    if (mode === 'dev') {
      // Development tokens get a well-formed answer for a lobby that does not exist, as production does.
      const playerToken = signPlayerToken(secret, { player_id: playerId, lobby_id: NIL_UUID, namespace_id: game.namespaceId, iat });
      return { lobbyId: NIL_UUID, region: { id: 'local', name: 'Local' }, playerToken };
    }

    const lobbyId = randomUUID();
    const startTs = now + config.startDelayMs;
    const readyTs = startTs + config.readyDelayMs;
    const idle = config.idleLifetimeMs > 0 ? config.idleLifetimeMs : null;
    await store.insertLobby(
      {
        lobby_id: lobbyId,
        namespace_id: game.namespaceId,
        game_mode: request.gameMode,
        region_id: region.id,
        region_name: region.name,
        max_players: maxPlayers ?? DEFAULT_MAX_PLAYERS,
        publicity: request.publicity,
        tags: JSON.stringify(request.tags),
        lobby_config: request.lobbyConfig === undefined ? null : JSON.stringify(request.lobbyConfig),
        create_ts: now,
        start_ts: startTs,
        ready_ts: readyTs,
        stop_ts: null,
        exit_code: null,
        failed: null,
        idle_lifetime_ms: idle,
        idle_stop_ts: idle === null ? null : readyTs + idle,
      },
      playerId,
    );
    const playerToken = signPlayerToken(secret, { player_id: playerId, lobby_id: lobbyId, namespace_id: game.namespaceId, iat });
    return { lobbyId, region: { id: region.id, name: region.name }, playerToken };
  }

  /**
   * A lobby of the game's namespace now, or API_NOT_FOUND (production answers 500 for an unknown lobby; 404 says
   * what happened).
   */
  async get(game: Game, namespaceId: string, lobbyId: string): Promise<LobbyState> {
    if (namespaceId !== game.namespaceId) fail('API_NOT_FOUND', { what: `Namespace ${namespaceId}` });
    const now = this.deps.clock.now();
    await this.deps.store.expireIdle(now);
    const lobby = await this.deps.store.getLobby(lobbyId);
    if (lobby === undefined || lobby.namespace_id !== namespaceId) fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
    return stateAt(lobby, now);
  }

  /** The lobbies of the game's namespace created before `before` (ms), newest first, at most `limit`. */
  async list(game: Game, namespaceId: string, before: number, limit: number): Promise<LobbyState[]> {
    if (namespaceId !== game.namespaceId) fail('API_NOT_FOUND', { what: `Namespace ${namespaceId}` });
    const now = this.deps.clock.now();
    await this.deps.store.expireIdle(now);
    // Every lobby alive at some time up to now: the history's query, from the start of time.
    const rows = await this.deps.store.lobbyHistory(namespaceId, 0, now + 1);
    return rows
      .filter((l) => l.create_ts < before)
      .sort((a, b) => b.create_ts - a.create_ts || (a.lobby_id < b.lobby_id ? -1 : 1))
      .slice(0, limit)
      .map((l) => stateAt(l, now));
  }

  /** Stops a lobby of the game (the cloud API's delete): false when it had already stopped. */
  async remove(game: Game, lobbyId: string): Promise<boolean> {
    const lobby = await this.deps.store.getLobby(lobbyId);
    if (lobby === undefined || lobby.namespace_id !== game.namespaceId) fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
    const stopped = await this.stop(lobbyId);
    return stopped !== null && !stopped.alreadyStopped;
  }

  /**
   * Stops a lobby (idempotent: a stopped lobby keeps its first stop) and returns it, with alreadyStopped true when
   * this call changed nothing; null when the lobby is unknown.
   */
  async stop(lobbyId: string, opts: StopOptions = {}): Promise<StoppedLobby | null> {
    const { store } = this.deps;
    const now = this.deps.clock.now();
    const exitCode = opts.exitCode ?? 0;
    // A lobby that already stopped by itself keeps that stop.
    await store.expireIdle(now);
    const stopped = await store.stopLobby(lobbyId, now, exitCode, opts.failed ?? exitCode !== 0);
    const lobby = await store.getLobby(lobbyId);
    return lobby === undefined ? null : { ...stateAt(lobby, now), alreadyStopped: !stopped };
  }

  /** A player joins, as the service's join would let them, so max_players and the idle lifetime act. */
  async join(lobbyId: string): Promise<JoinedPlayer> {
    const now = this.deps.clock.now();
    const playerId = randomUUID();
    const outcome = await this.deps.store.joinLobby(lobbyId, playerId, now);
    if (outcome.kind === 'not_found') fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
    if (outcome.kind === 'stopped') fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobbyId });
    if (outcome.kind === 'full') fail('MATCHMAKER_LOBBY_FULL', { lobby_id: lobbyId, max: outcome.lobby.max_players });
    const playerToken = signPlayerToken(this.deps.secret, {
      player_id: playerId,
      lobby_id: lobbyId,
      namespace_id: outcome.lobby.namespace_id,
      iat: Math.floor(now / 1000),
    });
    return { lobbyId, playerToken, players: outcome.players, maxPlayers: outcome.lobby.max_players };
  }
}

const NAMED = 10;

/** `a, b and c`; past ten, `… and 12 more` (never `1 more`: the one is named instead). */
export function nameList(names: readonly string[]): string {
  const shown = names.length <= NAMED + 1 ? [...names] : [...names.slice(0, NAMED), `${names.length - NAMED} more`];
  return shown.length === 1 ? shown[0]! : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}

function stateAt(lobby: LobbyRow, now: number): LobbyState {
  const state: LobbyState = { lobby, now };
  // Once started; a stopped lobby keeps the samples of its run up to the stop, as the service still answers the
  // job's recent metrics after it ended (its window is the last 15 minutes).
  const until = lobby.stop_ts ?? now;
  if (lobby.start_ts <= until) state.metrics = lobbyMetrics(lobby.lobby_id, lobby.start_ts, until);
  return state;
}
