// Idle lobbies (SERVICE-FACTS "Versions, namespaces…" §3): per (namespace, region, game mode of its current version),
// between the region's idle_lobbies min and max. The update runs after a deploy (every region of the game, awaited),
// after each find, join and create (its region, in the background: the answer does not wait), and the store keeps the
// max itself when a lobby empties (sql.ts `emptied`). No timer, as production.
import type { IdleInsert, IdleKey } from '../stores/store.js';
import { startInPlace } from './capacity.js';
import type { Game } from './games.js';
import { describe, type CurrentVersion, type RunningVersion } from './lobby-versions.js';
import { newLobbyRow, type MatchmakingDeps } from './lobby-row.js';
import { regionOf } from './regions.js';

export interface IdleDeps extends MatchmakingDeps {
  /** Where a background update's failure is told (it has no request to answer). */
  warn?: (message: string) => void;
}

export class IdleLobbies {
  /** The background updates under way, by namespace and region; one more is asked for while one runs. */
  private readonly running = new Map<string, Promise<void>>();
  private readonly again = new Set<string>();
  /** Namespaces whose idle lobbies this process has brought up to their min (see `ensure`). */
  private readonly ensured = new Set<string>();
  private closed = false;

  constructor(private readonly deps: IdleDeps) {}

  /**
   * A namespace's first matchmaker request in this process: its version's idle lobbies, made where missing (a store
   * whose lobbies stopped with the last serve, or a namespace created on a version that keeps some). Production makes
   * them only after a deploy or a find; here the first find of a namespace can be answered by one, as after a deploy.
   * `version` is the namespace's as the caller read it: one that keeps no idle lobby spares the update its reads (and
   * the namespace is looked at again on its next request, whose version may keep some).
   */
  async ensure(game: Game, version: RunningVersion): Promise<void> {
    if (this.ensured.has(game.namespaceId) || !game.regions.some((r) => keepsIdle(version, r.id))) return;
    this.ensured.add(game.namespaceId);
    await this.update(game, game.regions.map((r) => r.id));
  }

  /** The update of the namespace's idle lobbies in these regions, now (a deploy's: every region of the game). */
  async update(game: Game, regionIds: string[]): Promise<void> {
    this.ensured.add(game.namespaceId);
    // The namespace's row read once for all the regions.
    const current = await this.deps.lobbyVersions.current(game);
    for (const regionId of regionIds) await this.updateRegion(game, regionId, current);
  }

  /**
   * After a find, join or create in the region: the update in the background, one at a time per namespace and region.
   * With the namespace's current `version` the caller read, none when it keeps no idle lobby in the region: the update
   * would find nothing to do (a deploy since runs its own), and a create or find is spared its reads.
   */
  schedule(game: Game, regionId: string, version?: RunningVersion): void {
    if (this.closed || (version !== undefined && !keepsIdle(version, regionId))) return;
    const key = `${game.namespaceId}/${regionId}`;
    if (this.running.has(key)) {
      this.again.add(key);
      return;
    }
    const run = (async () => {
      do {
        this.again.delete(key);
        await this.updateRegion(game, regionId).catch((err: unknown) =>
          this.deps.warn?.(`the idle lobbies of namespace ${game.namespaceId} in ${regionId} were not updated: ${err instanceof Error ? err.message : String(err)}`),
        );
      } while (this.again.has(key) && !this.closed);
    })().finally(() => this.running.delete(key));
    this.running.set(key, run);
  }

  /** Resolves once no background update runs (tests wait on it; close does). */
  async settled(): Promise<void> {
    while (this.running.size > 0) await Promise.allSettled([...this.running.values()]);
  }

  /** No more background updates; the ones under way finish. */
  async close(): Promise<void> {
    this.closed = true;
    await this.settled();
  }

  /**
   * Production's update step for each game mode of the current version in the region: the longest-idle beyond max
   * stop; below min, lobbies are made (public, no tags, the game mode's max players, within lobby_count_max), each
   * counted again in the store under the namespace's find lock, so two replicas never make more than min together.
   */
  private async updateRegion(game: Game, regionId: string, current?: CurrentVersion): Promise<void> {
    const { store, runner, clock } = this.deps;
    const { version, namespaceName, lobbyCountMax } = current ?? (await this.deps.lobbyVersions.current(game));
    for (const gameMode of version.gameModes) {
      const idle = idleOf(gameMode, regionId);
      // With none kept, an emptied lobby stops at once: the region holds no idle lobby of the game mode.
      if (idle === undefined) continue;
      const key: IdleKey = { namespace_id: game.namespaceId, version_id: version.versionId, game_mode: gameMode.nameId, region_id: regionId };
      for (const lobbyId of await store.trimIdle(key, idle.max, clock.now())) await runner?.stop(lobbyId);
      const region = regionOf(game, regionId);
      for (let missing = idle.min - (await store.idleCount(key, clock.now())); missing > 0; missing--) {
        let outcome = 'enough' as IdleInsert;
        const placed = await startInPlace(
          runner,
          game,
          async () => {
            const now = clock.now();
            const lobby = await newLobbyRow(this.deps, game, now, {
              version, gameMode, region, maxPlayers: undefined, publicity: 'public', tags: {}, lobbyConfig: undefined, autoCreated: true,
            });
            outcome = await store.insertIdleLobby(lobby, idle.min, lobbyCountMax, now);
            return outcome === 'inserted' ? lobby : null;
          },
          (l) => describe(version, namespaceName, l),
        );
        // At this emulator's bound of servers, the namespace's lobby_count_max, or made elsewhere meanwhile.
        if (!placed || outcome !== 'inserted') break;
      }
    }
  }
}

/** The idle lobbies a game mode keeps in a region (undefined: none, min and max 0 alike). */
function idleOf(gameMode: RunningVersion['gameModes'][number], regionId: string) {
  const idle = gameMode.regions.find((r) => r.known && r.nameId === regionId)?.idleLobbies;
  return idle === undefined || (idle.min === 0 && idle.max === 0) ? undefined : idle;
}

const keepsIdle = (version: RunningVersion, regionId: string): boolean => version.gameModes.some((m) => idleOf(m, regionId) !== undefined);
