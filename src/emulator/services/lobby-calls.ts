// What a lobby's server calls with its lobby token: ready, closed, state, players connected and disconnected; and
// the lobby token itself, with the environment it is handed in.
import { fail } from '../errors.js';
import type { EmulatorConfig } from '../config.js';
import type { LobbyRow, Store } from '../stores/store.js';
import type { Clock } from './clock.js';
import { lobbyEnvironment } from './environment.js';
import type { Game } from './games.js';
import type { LobbyVersions } from './lobby-versions.js';
import { signToken, verifyPlayerToken } from './tokens.js';

/** The largest lobby state kept, in bytes of JSON: a documented limit of the emulator (API_BAD_BODY past it). */
export const MAX_STATE_BYTES = 64 * 1024;

/** Who called a lobby route: a lobby's own token, or a development token (mock answers, nothing kept). */
export type LobbyCaller = { mode: 'lobby'; game: Game; lobbyId: string } | { mode: 'dev' };

export interface LobbyCallsDeps {
  store: Store;
  clock: Clock;
  config: EmulatorConfig;
  secret: Buffer;
  lobbyVersions: LobbyVersions;
}

/** The lobby token of a lobby: what its process gets as RIVET_TOKEN. */
export function lobbyToken(secret: Buffer, game: Game, lobbyId: string): string {
  return signToken(secret, { kind: 'lobby', game_id: game.gameId, namespace_id: game.namespaceId, lobby_id: lobbyId });
}

export class LobbyCalls {
  constructor(private readonly deps: LobbyCallsDeps) {}

  /** The lobby's server says it is ready; repeating it is harmless. */
  async ready(caller: LobbyCaller): Promise<void> {
    if (caller.mode === 'dev') return;
    const { clock, config, store } = this.deps;
    const lobby = await store.readyLobby(caller.lobbyId, clock.now(), config.registrationWindowMs);
    if (lobby === undefined) fail('MATCHMAKER_LOBBY_NOT_FOUND', { lobby_id: caller.lobbyId });
    if (lobby.stop_ts !== null) fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: caller.lobbyId });
  }

  async setClosed(caller: LobbyCaller, closed: boolean): Promise<void> {
    if (caller.mode === 'dev') return;
    await this.runningLobby(caller);
    await this.deps.store.setLobbyClosed(caller.lobbyId, closed);
  }

  /** Keeps the state JSON as given (text already checked to be JSON, or empty to clear it). */
  async setState(caller: LobbyCaller, json: string | null): Promise<void> {
    if (caller.mode === 'dev') return;
    if (json !== null && Buffer.byteLength(json) > MAX_STATE_BYTES)
      fail('API_BAD_BODY', { reason: `a lobby state holds at most ${MAX_STATE_BYTES} bytes of JSON.` });
    await this.runningLobby(caller);
    await this.deps.store.setLobbyState(caller.lobbyId, json);
  }

  /** The state of a lobby of the namespace, or null (none set, or no such lobby), as production answers. */
  async getState(game: Game | null, lobbyId: string): Promise<unknown> {
    if (game === null) return null;
    const lobby = await this.deps.store.getLobby(lobbyId);
    if (lobby === undefined || lobby.namespace_id !== game.namespaceId || lobby.state === null) return null;
    return JSON.parse(lobby.state) as unknown;
  }

  /** The lobby's server presents the token a client sent it: the player connects, once. */
  async playerConnected(caller: LobbyCaller, playerToken: string): Promise<void> {
    const { clock, config, store } = this.deps;
    const playerId = this.playerOf(caller, playerToken);
    if (caller.mode === 'dev' || playerId === null) return;
    const outcome = await store.connectPlayer(playerId, caller.lobbyId, clock.now());
    if (outcome === 'different_lobby') fail('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
    if (outcome === 'already_connected') fail('MATCHMAKER_PLAYER_ALREADY_CONNECTED');
    if (outcome === 'expired') fail('MATCHMAKER_PLAYER_REGISTRATION_EXPIRED', { seconds: config.registrationWindowMs / 1000 });
    if (outcome === 'removed') fail('MATCHMAKER_PLAYER_REMOVED');
  }

  /** The player left; a lobby find made stops when its last player has. */
  async playerDisconnected(caller: LobbyCaller, playerToken: string): Promise<void> {
    const playerId = this.playerOf(caller, playerToken);
    if (caller.mode === 'dev' || playerId === null) return;
    const outcome = await this.deps.store.disconnectPlayer(playerId, caller.lobbyId, this.deps.clock.now());
    if (outcome === 'different_lobby') fail('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
  }

  /**
   * The environment production gives the lobby's process; API_NOT_FOUND for a lobby not of the game,
   * MATCHMAKER_LOBBY_STOPPED once it stopped (its token changes nothing then: no server is to start with it).
   */
  async environment(game: Game, lobbyId: string, endpoint: string): Promise<Record<string, string>> {
    const lobby = await this.deps.store.currentLobby(lobbyId, this.deps.clock.now());
    if (lobby === undefined || lobby.namespace_id !== game.namespaceId) fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
    if (lobby.stop_ts !== null) fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobbyId });
    return lobbyEnvironment({ lobby, endpoint, token: lobbyToken(this.deps.secret, game, lobbyId), version: await this.deps.lobbyVersions.ofLobby(game, lobby) });
  }

  /** The player a token names (null for a development player, which nothing keeps); the token's errors first. */
  private playerOf(caller: LobbyCaller, token: string): string | null {
    const check = verifyPlayerToken(this.deps.secret, token, this.deps.clock.now());
    if (check.kind === 'not_player') fail('CLAIMS_MISSING_ENTITLEMENT', { reason: 'player_token must be a player token.' });
    if (check.kind === 'malformed' || check.kind === 'expired')
      fail('TOKEN_ERROR', { reason: check.kind === 'expired' ? 'it has expired.' : 'it is malformed or its signature is invalid.' });
    if (check.kind === 'dev_player') {
      if (caller.mode === 'dev') return null;
      fail('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
    }
    if (caller.mode === 'lobby' && check.claims.lobby_id !== caller.lobbyId) fail('MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY');
    return check.claims.player_id;
  }

  /** The caller's lobby, not stopped (its stop due by time counts): a stopped lobby's token changes nothing. */
  private async runningLobby(caller: { lobbyId: string }): Promise<LobbyRow> {
    const { clock, store } = this.deps;
    const lobby = await store.currentLobby(caller.lobbyId, clock.now());
    if (lobby === undefined) fail('MATCHMAKER_LOBBY_NOT_FOUND', { lobby_id: caller.lobbyId });
    if (lobby.stop_ts !== null) fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: caller.lobbyId });
    return lobby;
  }
}
