// Lobbies as the cloud and admin routes see them: the list, the logs view of one lobby and of the namespace's; the
// stop. Matchmaking is in matchmaking.ts, what a lobby's server calls with its lobby token in lobby-calls.ts.
import { fail } from '../errors.js';
import type { LobbyRow, Store } from '../stores/store.js';
import type { LobbyServerRunner } from './capacity.js';
import type { Clock } from './clock.js';
import type { Game } from './games.js';
import type { IdleLobbies } from './idle-lobbies.js';
import { DEFAULT_MAX_PLAYERS } from './lobby-checks.js';
import type { LobbyVersions } from './lobby-versions.js';
import { NIL_UUID } from './matchmaking.js';
import { lobbyTier } from './environment.js';
import { allocatedMemoryMb, sampledMetrics, type JobMetrics } from './metrics.js';
import { DEV_REGION, regionInfo, versionRegions, type RegionInfo } from './regions.js';

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

export interface LobbyDeps {
  store: Store;
  clock: Clock;
  /** What runs lobbies' servers, in readiness `run`: a stop stops its lobby's server, a lobby's metrics are its samples. */
  runner?: LobbyServerRunner;
  lobbyVersions: LobbyVersions;
  idleLobbies?: IdleLobbies;
}

export class Lobbies {
  readonly runner: LobbyServerRunner | undefined;

  constructor(private readonly deps: LobbyDeps) {
    this.runner = deps.runner;
  }

  /**
   * The public running lobbies of the namespace's current version, of its listable game modes; one with no
   * connected player only when it is the only one of its game mode.
   */
  async list(game: Game, mode: 'public' | 'dev', includeState: boolean): Promise<ListedLobbies> {
    const { version } = await this.deps.lobbyVersions.current(game);
    const gameModes = version.gameModes.map((m) => ({ game_mode_id: m.nameId }));
    if (mode === 'dev') {
      // Production's mock: one empty lobby per game mode, in the local region.
      const lobbies = version.gameModes.map((m) => ({ ...listEntry(DEV_REGION.id, m.nameId, NIL_UUID, DEV_COUNTS, 0) }));
      return { game_modes: gameModes, regions: [regionInfo(DEV_REGION)], lobbies };
    }
    const { store } = this.deps;
    await store.expireIdle(this.deps.clock.now());
    // Outdated lobbies (of another version) are left out, as production's list does.
    const rows = (await store.listLobbies(game.namespaceId)).filter((row) => row.version_id === version.versionId);
    const listable = new Set(version.gameModes.filter((m) => m.listable).map((m) => m.nameId));
    const perMode = new Map<string, number>();
    for (const row of rows) perMode.set(row.game_mode, (perMode.get(row.game_mode) ?? 0) + 1);
    const lobbies = rows
      .filter((row) => listable.has(row.game_mode))
      .filter((row) => row.connected > 0 || perMode.get(row.game_mode) === 1)
      .map((row) => {
        const entry: ListedLobbies['lobbies'][number] = listEntry(row.region_id, row.game_mode, row.lobby_id, row, row.connected);
        if (includeState) entry.state = row.state === null ? null : (JSON.parse(row.state) as unknown);
        return entry;
      });
    return { game_modes: gameModes, regions: versionRegions(game, version.gameModes), lobbies };
  }

  /** The regions list: those of the namespace's version (the local one for a development token). */
  async regions(game: Game, mode: 'public' | 'dev'): Promise<RegionInfo[]> {
    if (mode === 'dev') return [regionInfo(DEV_REGION)];
    return versionRegions(game, (await this.deps.lobbyVersions.current(game)).version.gameModes);
  }

  /**
   * A lobby of the game's namespace now, or API_NOT_FOUND (production answers 500 for an unknown lobby; 404 says
   * what happened).
   */
  async get(game: Game, namespaceId: string, lobbyId: string): Promise<LobbyState> {
    if (namespaceId !== game.namespaceId) fail('API_NOT_FOUND', { what: `Namespace ${namespaceId}` });
    const now = this.deps.clock.now();
    const lobby = await this.deps.store.currentLobby(lobbyId, now);
    if (lobby === undefined || lobby.namespace_id !== namespaceId) fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
    return this.withSamples({ lobby, now }, game);
  }

  /** The lobbies of the game's namespace created before `before` (ms), newest first, at most `limit`. */
  async listNamespace(game: Game, namespaceId: string, before: number, limit: number): Promise<LobbyState[]> {
    if (namespaceId !== game.namespaceId) fail('API_NOT_FOUND', { what: `Namespace ${namespaceId}` });
    const now = this.deps.clock.now();
    await this.deps.store.expireIdle(now);
    // Every lobby alive at some time up to now, created before `before`: a page of the history's query, from the
    // start of time (create_ts is whole milliseconds: those created at before - 1 and earlier).
    const rows = await this.deps.store.lobbyHistory(namespaceId, 0, now + 1, limit, { create_ts: Math.min(before, now + 2) - 1, lobby_id: '' });
    // The list answers the lobbies alone: no metrics to look up.
    return rows.map((l) => ({ lobby: l, now }));
  }

  /**
   * What a deploy of `versionId` to the game's namespace does to its lobbies (production's idle-lobby update, run
   * after a deploy): the idle lobbies of older versions stop now, occupied ones run on and stop when they empty; then
   * each game mode's idle lobbies are brought between its min and max in every region of the game.
   */
  async afterDeploy(game: Game, versionId: string): Promise<void> {
    const stopped = await this.deps.store.stopIdleOutdated(game.namespaceId, versionId, this.deps.clock.now());
    for (const lobbyId of stopped) await this.runner?.stop(lobbyId);
    await this.deps.idleLobbies?.update(game, game.regions.map((r) => r.id));
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
  async stop(lobbyId: string, opts: StopOptions = {}, game?: Game): Promise<StoppedLobby | null> {
    const { store } = this.deps;
    const stopped = await recordStop(store, this.deps.clock.now(), lobbyId, opts);
    // Its server (if this emulator runs one) goes with it: SIGTERM, then SIGKILL after the grace period.
    // (Asked even when it had stopped already: a lobby stopped by time, or elsewhere, may still have one here.)
    await this.runner?.stop(lobbyId);
    const lobby = await store.getLobby(lobbyId);
    return lobby === undefined ? null : { ...(await this.withSamples({ lobby, now: this.deps.clock.now() }, game)), alreadyStopped: !stopped };
  }

  /**
   * A lobby's metrics: its server's samples where an emulator ran one (this emulator's own while it runs the server,
   * else those its owner, this replica or another, kept in the store; none yet: empty). A lobby no emulator runs a
   * server for (readiness delay or manual) has no metrics: nothing measures a server there, and none is made up. The
   * allocated memory is the tier of the lobby's version's game mode in its region (`game`'s), as its server was given.
   */
  private async withSamples(state: LobbyState, game?: Game): Promise<LobbyState> {
    const { lobby } = state;
    // Once started; a stopped lobby keeps the samples of its run up to the stop, as the service still answers the
    // job's recent metrics after it ended (its window is the last 15 minutes).
    if (lobby.owner === null || lobby.start_ts > (lobby.stop_ts ?? state.now)) return state;
    const samples = this.runner?.samples(lobby.lobby_id) ?? parseSamples(await this.deps.store.lobbySamples(lobby.lobby_id));
    const tier = game === undefined ? undefined : lobbyTier((await this.deps.lobbyVersions.ofLobby(game, lobby)).tier);
    state.metrics = sampledMetrics(lobby.lobby_id, samples ?? [], allocatedMemoryMb(tier?.memory));
    return state;
  }
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

type PlayerCounts = Pick<LobbyRow, 'max_players' | 'max_players_direct' | 'max_players_party'>;
const DEV_COUNTS: PlayerCounts = { max_players: DEFAULT_MAX_PLAYERS, max_players_direct: DEFAULT_MAX_PLAYERS, max_players_party: DEFAULT_MAX_PLAYERS };

function listEntry(regionId: string, gameMode: string, lobbyId: string, counts: PlayerCounts, connected: number): ListedLobbies['lobbies'][number] {
  return {
    region_id: regionId,
    game_mode_id: gameMode,
    lobby_id: lobbyId,
    max_players_normal: counts.max_players,
    max_players_direct: counts.max_players_direct,
    max_players_party: counts.max_players_party,
    total_player_count: connected,
  };
}
