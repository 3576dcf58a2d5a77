// Matchmaking: create and find (with the production order of checks), join by id and the admin join, each answered
// once its lobby is ready; the new lobby's record, and the player's token.
import { randomUUID } from 'node:crypto';
import { fail } from '../errors.js';
import { NamespaceChanged, type JoinOutcome, type LobbyRow, type NewPlayer } from '../stores/store.js';
import { noPlace, startInPlace } from './capacity.js';
import { lobbyPorts, type LobbyPort } from './environment.js';
import type { Game } from './games.js';
import { checkAction, checkGameModes, checkLobbyConfig, checkMaxPlayers, checkTags, defaultPublicity } from './lobby-checks.js';
import { nameList } from './names.js';
import { describe, type CurrentVersion } from './lobby-versions.js';
import { newLobbyRow, type MatchmakingDeps } from './lobby-row.js';
import { DEV_REGION, knownRegions, regionOf } from './regions.js';
import type { IdleLobbies } from './idle-lobbies.js';
import { verifyAction } from './verification.js';
import type { GameModeConfig } from './version-config.js';
import { FIND_TIMEOUT_MS, SERVED_WITHIN_MS, untilReady } from './readiness.js';
import { signPlayerToken } from './tokens.js';

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';
/** Players from one address not yet removed, at most, in a namespace whose mm-config set none (production's default). */
export const DEFAULT_MAX_PLAYERS_PER_CLIENT = 8;
// Where a development token's mock lobby says its server listens: the token was made for no hostname here.
const DEV_PORTS: Record<string, LobbyPort> = { default: { port: 8080 } };

/** A lobby create as the client asked for it, its shape already checked. */
export interface LobbyRequest {
  gameMode: string;
  regionId: string | undefined;
  maxPlayers: number | undefined;
  /** undefined: public where the game mode allows it, else private (production's default). */
  publicity: 'public' | 'private' | undefined;
  tags: Record<string, string>;
  lobbyConfig: unknown;
  /** What the version's verification call is given (verification_data), and the client's User-Agent. */
  verificationData?: unknown;
  userAgent?: string | null;
}

/** A find as the client asked for it, its shape already checked (game_modes not empty). */
export interface FindRequest {
  gameModes: string[];
  regionIds: string[] | undefined;
  preventAutoCreate: boolean;
  tags: Record<string, string>;
  maxPlayers: number | undefined;
  verificationData?: unknown;
  userAgent?: string | null;
}

/** What a join by id gives its verification call beside the lobby. */
export interface JoinRequest {
  verificationData?: unknown;
  userAgent?: string | null;
}

/** A player in a lobby: the answer to a create, find or join. */
export interface LobbySeat {
  lobbyId: string;
  region: { id: string; name: string };
  playerToken: string;
  ports: Record<string, LobbyPort>;
}

export interface JoinedPlayer {
  lobbyId: string;
  playerToken: string;
  players: number;
  maxPlayers: number;
}


/** What find, join and create are given beside: the idle update they start. */
export interface MatchmakingServices extends MatchmakingDeps {
  idleLobbies?: IdleLobbies;
}


export class Matchmaking {
  constructor(private readonly deps: MatchmakingServices) {}

  /**
   * Checks in the production order (game mode, tags, max players, region) against the game's own game modes and
   * regions, then creates in its namespace, or mocks for `dev`.
   */
  async create(game: Game, mode: 'public' | 'dev', request: LobbyRequest, sourceIp: string): Promise<LobbySeat> {
    // From the namespace's row as this process read it last. A deploy or mm-config since (through any replica) is
    // seen by the insert, or, when the row read last refused the create, by a fresh read; then the create is made
    // again from the fresh read, checked as it always was.
    // (Never once the lobby is written: a failure after that is the create's.)
    const seen = await this.deps.lobbyVersions.current(game, { seen: true });
    const first = { written: false };
    try {
      return await this.createFrom(seen, first, game, mode, request, sourceIp);
    } catch (err) {
      if (first.written) throw err;
      const fresh = await this.deps.lobbyVersions.current(game);
      if (!(err instanceof NamespaceChanged) && fresh.stamp === seen.stamp) throw err;
      return this.createFrom(fresh, undefined, game, mode, request, sourceIp);
    }
  }

  /** A create from `current`; with `seen`, its insert checks the namespace's row is still `current`'s, and says when it wrote. */
  private async createFrom(current: CurrentVersion, seen: { written: boolean } | undefined, game: Game, mode: 'public' | 'dev', request: LobbyRequest, sourceIp: string): Promise<LobbySeat> {
    const now = this.deps.clock.now();
    const { namespaceName, version, lobbyCountMax, maxPlayersPerClient } = current;
    const gameModes = checkGameModes(version, [request.gameMode]);
    const gameMode = gameModes[0]!;
    checkTags(request.tags, gameModes);
    checkMaxPlayers(request.maxPlayers, gameModes, version);
    // Before the region, as production checks.
    const publicity = request.publicity ?? defaultPublicity(gameMode);
    checkAction('create', gameModes, publicity);
    checkLobbyConfig(request.lobbyConfig);
    if (mode !== 'dev')
      await verifyAction(this.deps.config, game, 'create', gameModes, sourceIp, request, { lobby: null, lobbyConfig: request.lobbyConfig, tags: request.tags, dynamicMaxPlayers: request.maxPlayers ?? null });
    const region = regionOf(game, request.regionId ?? gameMode.regions.find((r) => r.known)?.nameId);
    // Production never answers for a region the game mode lacks (its create waits on a lobby never made): this says so.
    if (!gameMode.regions.some((r) => r.nameId === region.id)) regionNotInGameMode(region.id, gameMode);
    if (mode === 'dev') return this.devSeat(game);
    await this.deps.idleLobbies?.ensure(game, version);
    const { store } = this.deps;
    const limit = this.sourceLimit(maxPlayersPerClient);
    // Production's per-client check comes before the lobby is made (its create adds the creator as a find would).
    if (limit !== null && (await store.playersFromSource(game.namespaceId, sourceIp, now)) >= limit) tooManyFromSource(limit);
    const lobby = await newLobbyRow(this.deps, game, now, { ...request, version, gameMode, publicity, region, autoCreated: false });
    const player = this.newPlayer(sourceIp);
    let inserted = false;
    const placed = await startInPlace(this.deps.runner, game, async () => {
      // A custom lobby counts against lobby_count_max with every running lobby, itself included: up to max.
      inserted = await store.insertLobby(lobby, player, lobbyCountMax, seen && current.stamp);
      if (seen) seen.written = inserted;
      return inserted ? lobby : null;
    }, (l) => describe(version, namespaceName, l));
    if (!placed) noPlace(this.deps.config.maxRunningLobbies);
    if (!inserted) tooManyLobbies(lobbyCountMax);
    this.deps.idleLobbies?.schedule(game, region.id, version);
    return this.seat(lobby, player.player_id, now);
  }

  /**
   * Find: the checks in production's order, then the fullest lobby with room, else a new one (unless prevented);
   * answers once that lobby is ready.
   */
  async find(game: Game, mode: 'public' | 'dev', request: FindRequest, sourceIp: string): Promise<LobbySeat> {
    const { config, store } = this.deps;
    const now = this.deps.clock.now();
    const { namespaceName, version, lobbyCountMax, maxPlayersPerClient } = await this.deps.lobbyVersions.current(game);
    const gameModes = checkGameModes(version, request.gameModes);
    checkTags(request.tags, gameModes);
    checkMaxPlayers(request.maxPlayers, gameModes, version);
    const has = (gm: GameModeConfig, regionId: string) => gm.regions.some((r) => r.nameId === regionId);
    // No regions named: the first (the emulator's "closest") that a game mode asked for is in.
    const regions =
      request.regionIds === undefined
        ? [knownRegions(game).find((r) => gameModes.some((gm) => has(gm, r.id))) ?? game.regions[0]!]
        : request.regionIds.map((id) => regionOf(game, id));
    // The lobby a find would make: the first game mode asked for with a region asked for (production's pair).
    const autoMode = gameModes.find((gm) => regions.some((r) => has(gm, r.id)));
    if (autoMode === undefined) fail('MATCHMAKER_AUTO_CREATE_FAILED');
    const autoRegion = regions.find((r) => has(autoMode, r.id))!;
    // Only the game mode a lobby would be made of, unless none may be (production's).
    checkAction('find', request.preventAutoCreate ? gameModes : [autoMode]);
    if (mode === 'dev') return this.devSeat(game);
    const verified = { lobby: null, lobbyConfig: undefined, tags: request.tags, dynamicMaxPlayers: request.maxPlayers ?? null };
    await verifyAction(this.deps.config, game, 'find', request.preventAutoCreate ? gameModes : [autoMode], sourceIp, request, verified);
    await this.deps.idleLobbies?.ensure(game, version);
    const player = this.newPlayer(sourceIp);
    const query = {
      namespace_id: game.namespaceId,
      version_id: version.versionId,
      game_modes: request.gameModes,
      region_ids: regions.map((r) => r.id),
      tags: request.tags,
      now,
      source_limit: this.sourceLimit(maxPlayersPerClient),
      // The lobby a find would make is counted before the check (production's): finds make up to max - 1.
      max_lobbies: lobbyCountMax - 1,
      served_since: now - SERVED_WITHIN_MS,
    };
    // A lobby to create (its port taken from the system) only once the search found none: the store searches
    // again in the transaction that creates it, so a lobby freed or made meanwhile is still preferred.
    let outcome = await store.findLobby(query, player, null);
    if (outcome.kind === 'none' && !request.preventAutoCreate) {
      const placed = await startInPlace(this.deps.runner, game, async () => {
        const create = await newLobbyRow(this.deps, game, now, {
          version,
          gameMode: autoMode,
          region: autoRegion,
          maxPlayers: request.maxPlayers,
          publicity: 'public',
          tags: request.tags,
          lobbyConfig: undefined,
          autoCreated: true,
        });
        outcome = await store.findLobby(query, player, create);
        // The place is the new lobby's only when this find made it.
        return outcome.kind === 'joined' && outcome.created ? outcome.lobby : null;
      }, (l) => describe(version, namespaceName, l));
      if (!placed) {
        // At this emulator's bound of servers: a lobby made meanwhile (elsewhere, or in a freed place) still takes the player.
        outcome = await store.findLobby(query, player, null);
        if (outcome.kind === 'none') noPlace(config.maxRunningLobbies);
      }
    }
    if (outcome.kind === 'none') fail('MATCHMAKER_NO_AVAILABLE_LOBBIES');
    if (outcome.kind === 'too_many_lobbies') tooManyLobbies(lobbyCountMax);
    if (outcome.kind === 'too_many_from_source') tooManyFromSource(query.source_limit!);
    this.deps.idleLobbies?.schedule(game, outcome.lobby.region_id, version);
    const lobby = await untilReady(this.deps, outcome.lobby, now + FIND_TIMEOUT_MS);
    return this.seat(lobby, player.player_id, this.deps.clock.now());
  }

  /** Join a lobby of the namespace by id (closed ones too), answered once it is ready. */
  async joinById(game: Game, mode: 'public' | 'dev', lobbyId: string, sourceIp: string, request: JoinRequest = {}): Promise<LobbySeat> {
    if (mode === 'dev') return this.devSeat(game);
    const { store } = this.deps;
    const now = this.deps.clock.now();
    const notFound = (): never => fail('MATCHMAKER_LOBBY_NOT_FOUND', { lobby_id: lobbyId });
    const known = await store.getLobby(lobbyId);
    if (known === undefined || known.namespace_id !== game.namespaceId) return notFound();
    // The lobby's own version's join config, however old it is.
    const version = await this.deps.lobbyVersions.version(game, known.version_id);
    const joinModes = version.gameModes.filter((m) => m.nameId === known.game_mode);
    checkAction('join', joinModes);
    await verifyAction(this.deps.config, game, 'join', joinModes, sourceIp, request, { lobby: known, lobbyConfig: undefined, tags: {}, dynamicMaxPlayers: null });
    const { maxPlayersPerClient } = await this.deps.lobbyVersions.current(game);
    const player = this.newPlayer(sourceIp);
    const sourceLimit = this.sourceLimit(maxPlayersPerClient);
    const outcome = await store.joinLobby(lobbyId, player, now, sourceLimit);
    const entered = joined(outcome, lobbyId, notFound, sourceLimit).lobby;
    this.deps.idleLobbies?.schedule(game, entered.region_id);
    const lobby = await untilReady(this.deps, entered, now + FIND_TIMEOUT_MS);
    return this.seat(lobby, player.player_id, this.deps.clock.now());
  }

  /** A player joins, as the service's join would let them, so max_players and the idle lifetime act. */
  async join(lobbyId: string): Promise<JoinedPlayer> {
    const now = this.deps.clock.now();
    // A player whose client found the lobby and whose server admitted it: connected at once.
    const player: NewPlayer = { ...this.newPlayer(''), connected: true };
    const outcome = await this.deps.store.joinLobby(lobbyId, player, now, null);
    const { lobby, players } = joined(outcome, lobbyId, () => fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` }), null);
    const playerToken = this.playerToken(player.player_id, lobbyId, lobby.namespace_id, now);
    return { lobbyId, playerToken, players, maxPlayers: lobby.max_players_direct };
  }

  private newPlayer(sourceIp: string): NewPlayer {
    return { player_id: randomUUID(), source_ip: sourceIp, registration_ms: this.deps.config.registrationWindowMs, connected: false };
  }

  /**
   * The per-client bound of the namespace: its mm-config's where set, always; else production's default of 8 where
   * rate limits are on (off, as a local emulator runs by default, every client is 127.0.0.1: no bound).
   */
  private sourceLimit(maxPlayersPerClient: number | null): number | null {
    return maxPlayersPerClient ?? (this.deps.config.rateLimits ? DEFAULT_MAX_PLAYERS_PER_CLIENT : null);
  }

  /** A player's token, bound to its lobby; a development token's mock player is labelled `dev_player`. */
  private playerToken(playerId: string, lobbyId: string, namespaceId: string, now: number, label?: 'dev_player'): string {
    return signPlayerToken(this.deps.secret, { player_id: playerId, lobby_id: lobbyId, namespace_id: namespaceId, iat: Math.floor(now / 1000) }, label);
  }

  private seat(lobby: LobbyRow, playerId: string, now: number): LobbySeat {
    const playerToken = this.playerToken(playerId, lobby.lobby_id, lobby.namespace_id, now);
    return { lobbyId: lobby.lobby_id, region: { id: lobby.region_id, name: lobby.region_name }, playerToken, ports: lobbyPorts(lobby) };
  }

  /** Development tokens get a well-formed answer for a lobby that does not exist, as production does. */
  private devSeat(game: Game): LobbySeat {
    const playerToken = this.playerToken(randomUUID(), NIL_UUID, game.namespaceId, this.deps.clock.now(), 'dev_player');
    return { lobbyId: NIL_UUID, region: DEV_REGION, playerToken, ports: DEV_PORTS };
  }
}

/** The lobby a join put its player in, or the service's answer why not (`notFound`: for a lobby it does not know). */
function joined(outcome: JoinOutcome, lobbyId: string, notFound: () => never, sourceLimit: number | null): { lobby: LobbyRow; players: number } {
  if (outcome.kind === 'not_found') notFound();
  if (outcome.kind === 'stopped') fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobbyId });
  if (outcome.kind === 'full') fail('MATCHMAKER_LOBBY_FULL', { lobby_id: lobbyId, max: outcome.lobby.max_players_direct });
  if (outcome.kind === 'too_many_from_source') tooManyFromSource(sourceLimit ?? 0);
  return outcome;
}

function regionNotInGameMode(regionId: string, gameMode: GameModeConfig): never {
  const known = gameMode.regions.filter((r) => r.known).map((r) => r.nameId);
  fail('MATCHMAKER_REGION_NOT_FOUND', { region: regionId, known: `${nameList(known)} for game mode ${gameMode.nameId}` });
}

function tooManyFromSource(max: number): never {
  fail('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE', { max });
}

function tooManyLobbies(max: number): never {
  fail('MATCHMAKER_TOO_MANY_LOBBIES', { reason: `this namespace runs ${max} at most (its lobby_count_max).` });
}

