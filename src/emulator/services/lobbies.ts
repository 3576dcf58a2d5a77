// Lobbies: create and find (with the production order of checks), join, the list; the logs view of one lobby; the
// stop. What a lobby's server calls with its lobby token is in lobby-calls.ts.
import { randomUUID } from 'node:crypto';
import type { EmulatorConfig, PortSetting } from '../config.js';
import { fail } from '../errors.js';
import { NOT_READY, type LobbyRow, type NewPlayer, type Store } from '../stores/store.js';
import { noPlace, startInPlace, type LobbyServerRunner } from './capacity.js';
import type { Clock } from './clock.js';
import { lobbyPorts, type LobbyPort } from './environment.js';
import type { Game } from './games.js';
import { checkGameModes, checkLobbyConfig, checkMaxPlayers, checkTags, DEFAULT_MAX_PLAYERS } from './lobby-checks.js';
import { sampledMetrics, type JobMetrics } from './metrics.js';
import { freePort } from './ports.js';
import { DEV_REGION, regionInfo, regionOf, type RegionInfo } from './regions.js';
import { signPlayerToken } from './tokens.js';

export const NIL_UUID = '00000000-0000-0000-0000-000000000000';
/** Find and join answer once their lobby is ready, waiting at most this long (the service's request timeout). */
export const FIND_TIMEOUT_MS = 50_000;
/** Lobbies a namespace runs at most before find stops creating more. */
export const MAX_LOBBIES = 128;
/** Unconnected players from one address at most (with rate limits on). */
export const MAX_UNCONNECTED_FROM_SOURCE = 8;
/**
 * A lobby whose server an emulator runs is handed out only while that emulator said its records were current
 * (every exit of its servers written) this recently: it says so every second (LobbyServers.sweep), and stops
 * saying so while its store does not take what it has to write, or once it is gone.
 */
export const SERVED_WITHIN_MS = 5_000;
// Where a development token's mock lobby says its server listens: the token was made for no hostname here.
const DEV_PORTS: Record<string, LobbyPort> = { default: { port: 8080 } };

/** A lobby create as the client asked for it, its shape already checked. */
export interface LobbyRequest {
  gameMode: string;
  regionId: string | undefined;
  maxPlayers: number | undefined;
  publicity: 'public' | 'private';
  tags: Record<string, string>;
  lobbyConfig: unknown;
}

/** A find as the client asked for it, its shape already checked (game_modes not empty). */
export interface FindRequest {
  gameModes: string[];
  regionIds: string[] | undefined;
  preventAutoCreate: boolean;
  tags: Record<string, string>;
  maxPlayers: number | undefined;
}

/** A player in a lobby: the answer to a create, find or join. */
export interface LobbySeat {
  lobbyId: string;
  region: { id: string; name: string };
  playerToken: string;
  ports: Record<string, LobbyPort>;
}

export interface ListedLobbies {
  game_modes: { game_mode_id: string }[];
  regions: RegionInfo[];
  lobbies: {
    region_id: string;
    game_mode_id: string;
    lobby_id: string;
    max_players_normal: number;
    max_players_direct: number;
    max_players_party: number;
    total_player_count: number;
    state?: unknown;
  }[];
}

/** A lobby as seen at `now`; metrics once it has started, up to its stop, where a server of it is measured. */
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
  /** When it stopped (ms): its server's end, recorded later when the store did not answer then; now by default. */
  at?: number;
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
  /** What runs lobbies' servers, in readiness `run`. */
  runner?: LobbyServerRunner;
}

export class Lobbies {
  readonly runner: LobbyServerRunner | undefined;

  constructor(private readonly deps: LobbyDeps) {
    this.runner = deps.runner;
  }

  /**
   * Checks in the production order (game mode, tags, max players, region) against the game's own game modes and
   * regions, then creates in its namespace, or mocks for `dev`.
   */
  async create(game: Game, mode: 'public' | 'dev', request: LobbyRequest, sourceIp: string): Promise<LobbySeat> {
    const now = this.deps.clock.now();
    checkGameModes(game, [request.gameMode]);
    checkTags(request.tags);
    checkMaxPlayers(request.maxPlayers);
    // Before the region, as production checks.
    checkLobbyConfig(request.lobbyConfig);
    const region = regionOf(game, request.regionId);
    if (mode === 'dev') return this.devSeat(game);
    const lobby = await this.newLobby(game, now, {
      gameMode: request.gameMode,
      region,
      maxPlayers: request.maxPlayers,
      publicity: request.publicity,
      tags: request.tags,
      lobbyConfig: request.lobbyConfig,
      autoCreated: false,
    });
    const player = this.newPlayer(sourceIp);
    const placed = await startInPlace(this.runner, game, async () => {
      await this.deps.store.insertLobby(lobby, player);
      return lobby;
    });
    if (!placed) noPlace(this.deps.config.maxRunningLobbies);
    return this.seat(lobby, player.player_id, now);
  }

  /**
   * Find: the checks in production's order, then the fullest lobby with room, else a new one (unless prevented);
   * answers once that lobby is ready.
   */
  async find(game: Game, mode: 'public' | 'dev', request: FindRequest, sourceIp: string): Promise<LobbySeat> {
    const { config, store } = this.deps;
    const now = this.deps.clock.now();
    checkGameModes(game, request.gameModes);
    checkTags(request.tags);
    checkMaxPlayers(request.maxPlayers);
    const regions = request.regionIds === undefined ? [game.regions[0]!] : request.regionIds.map((id) => regionOf(game, id));
    if (mode === 'dev') return this.devSeat(game);
    const player = this.newPlayer(sourceIp);
    const query = {
      namespace_id: game.namespaceId,
      game_modes: request.gameModes,
      region_ids: regions.map((r) => r.id),
      tags: request.tags,
      now,
      source_limit: config.rateLimits ? MAX_UNCONNECTED_FROM_SOURCE : null,
      max_lobbies: MAX_LOBBIES,
      served_since: now - SERVED_WITHIN_MS,
    };
    // A lobby to create (its port taken from the system) only once the search found none: the store searches
    // again in the transaction that creates it, so a lobby freed or made meanwhile is still preferred.
    let outcome = await store.findLobby(query, player, null);
    if (outcome.kind === 'none' && !request.preventAutoCreate) {
      const placed = await startInPlace(this.runner, game, async () => {
        const create = await this.newLobby(game, now, {
          gameMode: request.gameModes[0]!,
          region: regions[0]!,
          maxPlayers: request.maxPlayers,
          publicity: 'public',
          tags: request.tags,
          lobbyConfig: undefined,
          autoCreated: true,
        });
        outcome = await store.findLobby(query, player, create);
        // The place is the new lobby's only when this find made it.
        return outcome.kind === 'joined' && outcome.created ? outcome.lobby : null;
      });
      if (!placed) {
        // At this emulator's bound of servers: a lobby made meanwhile (elsewhere, or in a freed place) still takes the player.
        outcome = await store.findLobby(query, player, null);
        if (outcome.kind === 'none') noPlace(config.maxRunningLobbies);
      }
    }
    if (outcome.kind === 'none') fail('MATCHMAKER_NO_AVAILABLE_LOBBIES');
    if (outcome.kind === 'too_many_lobbies') fail('MATCHMAKER_TOO_MANY_LOBBIES', { reason: `this namespace runs ${MAX_LOBBIES} already.` });
    if (outcome.kind === 'too_many_from_source') fail('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE', { max: MAX_UNCONNECTED_FROM_SOURCE });
    const lobby = await this.untilReady(outcome.lobby, now + FIND_TIMEOUT_MS);
    return this.seat(lobby, player.player_id, this.deps.clock.now());
  }

  /** Join a lobby of the namespace by id (closed ones too), answered once it is ready. */
  async joinById(game: Game, mode: 'public' | 'dev', lobbyId: string, sourceIp: string): Promise<LobbySeat> {
    if (mode === 'dev') return this.devSeat(game);
    const { config, store } = this.deps;
    const now = this.deps.clock.now();
    const known = await store.getLobby(lobbyId);
    if (known === undefined || known.namespace_id !== game.namespaceId) fail('MATCHMAKER_LOBBY_NOT_FOUND', { lobby_id: lobbyId });
    const player = this.newPlayer(sourceIp);
    const outcome = await store.joinLobby(lobbyId, player, now, config.rateLimits ? MAX_UNCONNECTED_FROM_SOURCE : null);
    if (outcome.kind === 'not_found') fail('MATCHMAKER_LOBBY_NOT_FOUND', { lobby_id: lobbyId });
    if (outcome.kind === 'stopped') fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobbyId });
    if (outcome.kind === 'full') fail('MATCHMAKER_LOBBY_FULL', { lobby_id: lobbyId, max: outcome.lobby.max_players });
    if (outcome.kind === 'too_many_from_source') fail('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE', { max: MAX_UNCONNECTED_FROM_SOURCE });
    const lobby = await this.untilReady(outcome.lobby, now + FIND_TIMEOUT_MS);
    return this.seat(lobby, player.player_id, this.deps.clock.now());
  }

  /** The public running lobbies; one with no connected player only when it is the only one of its game mode. */
  async list(game: Game, mode: 'public' | 'dev', includeState: boolean): Promise<ListedLobbies> {
    const gameModes = game.gameModes.map((m) => ({ game_mode_id: m }));
    if (mode === 'dev') {
      // Production's mock: one empty lobby per game mode, in the local region.
      const lobbies = game.gameModes.map((m) => ({ ...listEntry(DEV_REGION.id, m, NIL_UUID, DEFAULT_MAX_PLAYERS, 0) }));
      return { game_modes: gameModes, regions: [regionInfo(DEV_REGION)], lobbies };
    }
    const { store } = this.deps;
    await store.expireIdle(this.deps.clock.now());
    const rows = await store.listLobbies(game.namespaceId);
    const perMode = new Map<string, number>();
    for (const row of rows) perMode.set(row.game_mode, (perMode.get(row.game_mode) ?? 0) + 1);
    const lobbies = rows
      .filter((row) => row.connected > 0 || perMode.get(row.game_mode) === 1)
      .map((row) => {
        const entry: ListedLobbies['lobbies'][number] = listEntry(row.region_id, row.game_mode, row.lobby_id, row.max_players, row.connected);
        if (includeState) entry.state = row.state === null ? null : (JSON.parse(row.state) as unknown);
        return entry;
      });
    return { game_modes: gameModes, regions: game.regions.map(regionInfo), lobbies };
  }

  /** Waits (reading the store, so a ready call on any replica counts) until the lobby is ready or stopped. */
  private async untilReady(found: LobbyRow, deadline: number): Promise<LobbyRow> {
    const { clock, store } = this.deps;
    let lobby = found;
    for (;;) {
      const now = clock.now();
      if (lobby.stop_ts !== null && lobby.stop_ts <= now) fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobby.lobby_id });
      // Ready, and (where an emulator runs its server) that emulator's records current: its server is there.
      if (lobby.ready_ts <= now && (await this.served(lobby, now))) return lobby;
      if (now >= deadline) fail('API_REQUEST_TIMEOUT', { reason: `lobby ${lobby.lobby_id} was not ready within ${FIND_TIMEOUT_MS / 1000} s.` });
      // A lobby ready at a known time is waited for until then; one waiting for its server is looked at often.
      const wait = lobby.ready_ts === NOT_READY ? 50 : Math.min(Math.max(lobby.ready_ts - now, 5), 250);
      await new Promise((resolve) => setTimeout(resolve, wait));
      await store.expireIdle(clock.now());
      const current = await store.getLobby(lobby.lobby_id);
      if (current === undefined) fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobby.lobby_id });
      lobby = current;
    }
  }

  /**
   * Whether the emulator that runs the lobby's server (if one does) says its records are current: every exit of its
   * servers written, so a lobby it shows running has its server. One cut off from the store, or dead, does not.
   */
  private async served(lobby: LobbyRow, now: number): Promise<boolean> {
    if (lobby.owner === null || lobby.owner === this.runner?.owner.replica) return lobby.owner === null || this.runner!.current();
    const seen = await this.deps.store.replicaSeen(lobby.owner);
    return seen !== undefined && seen >= now - SERVED_WITHIN_MS;
  }

  private newPlayer(sourceIp: string): NewPlayer {
    return { player_id: randomUUID(), source_ip: sourceIp, registration_ms: this.deps.config.registrationWindowMs, connected: false };
  }

  private async newLobby(
    game: Game,
    now: number,
    l: {
      gameMode: string;
      region: { id: string; name: string };
      maxPlayers: number | undefined;
      publicity: 'public' | 'private';
      tags: Record<string, string>;
      lobbyConfig: unknown;
      autoCreated: boolean;
    },
  ): Promise<LobbyRow> {
    const { config } = this.deps;
    const lobbyId = randomUUID();
    // A server this emulator runs starts now (its lines and its exit count from here, however short its life).
    const startTs = this.runner === undefined ? now + config.startDelayMs : now;
    // A lobby whose server calls ready: started by hand (manual) or by the emulator (run).
    const manual = config.readiness !== 'delay';
    const readyTs = manual ? NOT_READY : startTs + config.readyDelayMs;
    const idle = config.idleLifetimeMs > 0 ? config.idleLifetimeMs : null;
    const ports = await lobbyPortsFor(lobbyId, config.gameModeSettings[l.gameMode]?.ports);
    return {
      lobby_id: lobbyId,
      namespace_id: game.namespaceId,
      game_mode: l.gameMode,
      region_id: l.region.id,
      region_name: l.region.name,
      max_players: l.maxPlayers ?? DEFAULT_MAX_PLAYERS,
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
      owner: this.runner?.owner.replica ?? null,
      owner_pid: this.runner?.owner.pid ?? null,
      owner_start: this.runner?.owner.start ?? null,
      server_pid: null,
      server_start: null,
    };
  }

  private seat(lobby: LobbyRow, playerId: string, now: number): LobbySeat {
    const playerToken = signPlayerToken(this.deps.secret, {
      player_id: playerId,
      lobby_id: lobby.lobby_id,
      namespace_id: lobby.namespace_id,
      iat: Math.floor(now / 1000),
    });
    return { lobbyId: lobby.lobby_id, region: { id: lobby.region_id, name: lobby.region_name }, playerToken, ports: lobbyPorts(lobby) };
  }

  /** Development tokens get a well-formed answer for a lobby that does not exist, as production does. */
  private devSeat(game: Game): LobbySeat {
    const claims = { player_id: randomUUID(), lobby_id: NIL_UUID, namespace_id: game.namespaceId, iat: Math.floor(this.deps.clock.now() / 1000) };
    return { lobbyId: NIL_UUID, region: DEV_REGION, playerToken: signPlayerToken(this.deps.secret, claims, 'dev_player'), ports: DEV_PORTS };
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
    return this.withSamples({ lobby, now });
  }

  /** The lobbies of the game's namespace created before `before` (ms), newest first, at most `limit`. */
  async listNamespace(game: Game, namespaceId: string, before: number, limit: number): Promise<LobbyState[]> {
    if (namespaceId !== game.namespaceId) fail('API_NOT_FOUND', { what: `Namespace ${namespaceId}` });
    const now = this.deps.clock.now();
    await this.deps.store.expireIdle(now);
    // Every lobby alive at some time up to now: the history's query, from the start of time.
    const rows = await this.deps.store.lobbyHistory(namespaceId, 0, now + 1);
    return rows
      .filter((l) => l.create_ts < before)
      .sort((a, b) => b.create_ts - a.create_ts || (a.lobby_id < b.lobby_id ? -1 : 1))
      .slice(0, limit)
      // The list answers the lobbies alone: no metrics to look up.
      .map((l) => ({ lobby: l, now }));
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
    const stopped = await recordStop(store, this.deps.clock.now(), lobbyId, opts);
    // Its server (if this emulator runs one) goes with it: SIGTERM, then SIGKILL after the grace period.
    // (Asked even when it had stopped already: a lobby stopped by time, or elsewhere, may still have one here.)
    await this.runner?.stop(lobbyId);
    const lobby = await store.getLobby(lobbyId);
    return lobby === undefined ? null : { ...(await this.withSamples({ lobby, now: this.deps.clock.now() })), alreadyStopped: !stopped };
  }

  /**
   * A lobby's metrics: its server's samples where an emulator ran one (this emulator's own while it runs the server,
   * else those its owner, this replica or another, kept in the store; none yet: empty). A lobby no emulator runs a
   * server for (readiness delay or manual) has no metrics: nothing measures a server there, and none is made up.
   */
  private async withSamples(state: LobbyState): Promise<LobbyState> {
    const { lobby } = state;
    // Once started; a stopped lobby keeps the samples of its run up to the stop, as the service still answers the
    // job's recent metrics after it ended (its window is the last 15 minutes).
    if (lobby.owner === null || lobby.start_ts > (lobby.stop_ts ?? state.now)) return state;
    const samples = this.runner?.samples(lobby.lobby_id) ?? parseSamples(await this.deps.store.lobbySamples(lobby.lobby_id));
    state.metrics = sampledMetrics(lobby.lobby_id, samples ?? []);
    return state;
  }

  /** A player joins, as the service's join would let them, so max_players and the idle lifetime act. */
  async join(lobbyId: string): Promise<JoinedPlayer> {
    const now = this.deps.clock.now();
    // A player whose client found the lobby and whose server admitted it: connected at once.
    const player: NewPlayer = { ...this.newPlayer(''), connected: true };
    const playerId = player.player_id;
    const outcome = await this.deps.store.joinLobby(lobbyId, player, now, null);
    if (outcome.kind === 'not_found') fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
    if (outcome.kind === 'stopped') fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobbyId });
    if (outcome.kind === 'full') fail('MATCHMAKER_LOBBY_FULL', { lobby_id: lobbyId, max: outcome.lobby.max_players });
    if (outcome.kind === 'too_many_from_source') fail('MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE', { max: MAX_UNCONNECTED_FROM_SOURCE });
    const playerToken = signPlayerToken(this.deps.secret, {
      player_id: playerId,
      lobby_id: lobbyId,
      namespace_id: outcome.lobby.namespace_id,
      iat: Math.floor(now / 1000),
    });
    return { lobbyId, playerToken, players: outcome.players, maxPlayers: outcome.lobby.max_players };
  }
}

/**
 * A new lobby's ports: its game mode's (a free port of each single one's protocol on this host, each range as
 * given), else the default ones: `default`, a free TCP port, and `game-range`, ten ports placed by the lobby id.
 */
async function lobbyPortsFor(lobbyId: string, settings: Record<string, PortSetting> | undefined): Promise<Record<string, LobbyPort>> {
  if (settings === undefined) {
    const h = parseInt(lobbyId.replace(/-/g, '').slice(-8), 16) >>> 0;
    const rangeMin = 40000 + ((h >>> 14) % 2000) * 10;
    return { default: { port: await freePort() }, 'game-range': { min: rangeMin, max: rangeMin + 9 } };
  }
  const ports: Record<string, LobbyPort> = {};
  const taken = new Set<number>();
  for (const [label, port] of Object.entries(settings)) {
    if (port.range !== undefined) {
      ports[label] = { ...port.range, protocol: port.protocol };
      continue;
    }
    // Each port once: the system may hand out a port it just handed out, closed since.
    let free = await freePort(port.protocol);
    while (taken.has(free)) free = await freePort(port.protocol);
    taken.add(free);
    ports[label] = { port: free, protocol: port.protocol };
  }
  return ports;
}

/**
 * Writes a lobby stopped (a stopped lobby keeps its first stop), true when this changed it: the store's half of a
 * stop, and what a server's exit reports (its server is gone: nothing to stop).
 */
export async function recordStop(store: Store, now: number, lobbyId: string, opts: StopOptions): Promise<boolean> {
  const exitCode = opts.exitCode ?? 0;
  // A lobby that already stopped by itself (by the time it stopped) keeps that stop.
  const at = Math.min(opts.at ?? now, now);
  await store.expireIdle(at);
  return store.stopLobby(lobbyId, at, exitCode, opts.failed ?? exitCode !== 0);
}

/** Samples as the store keeps them (JSON of [{ts, cpu, memory}]); undefined for none, or for what is not that. */
function parseSamples(text: string | undefined): { cpu: number; memory: number }[] | undefined {
  if (text === undefined) return undefined;
  try {
    const samples = JSON.parse(text) as unknown;
    const valid =
      Array.isArray(samples) &&
      samples.every((x) => typeof x === 'object' && x !== null && Number.isFinite((x as { cpu: unknown }).cpu) && Number.isFinite((x as { memory: unknown }).memory));
    return valid ? (samples as { cpu: number; memory: number }[]) : undefined;
  } catch {
    return undefined;
  }
}

function listEntry(regionId: string, gameMode: string, lobbyId: string, max: number, connected: number): ListedLobbies['lobbies'][number] {
  return {
    region_id: regionId,
    game_mode_id: gameMode,
    lobby_id: lobbyId,
    max_players_normal: max,
    max_players_direct: max,
    max_players_party: max,
    total_player_count: connected,
  };
}
