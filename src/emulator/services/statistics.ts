// Player statistics: the connected players of running lobbies (a pending player is not in game yet), by game mode
// and region, with every configured one present.
import type { Store } from '../stores/store.js';
import type { Clock } from './clock.js';
import type { Game } from './games.js';

export interface PlayerStatistics {
  player_count: number;
  game_modes: Record<string, { player_count: number; regions: Record<string, { player_count: number }> }>;
}

export class Statistics {
  constructor(private readonly deps: { store: Store; clock: Clock }) {}

  /** `dev` tokens get the empty answer; "outdated" lobbies belong to game modes the game no longer has. */
  async players(game: Game, mode: 'public' | 'dev', excludeOutdated: boolean): Promise<PlayerStatistics> {
    if (mode === 'dev') return { player_count: 0, game_modes: {} };
    const { store } = this.deps;
    await store.expireIdle(this.deps.clock.now());
    let total = 0;
    const gameModes: PlayerStatistics['game_modes'] = {};
    for (const row of await store.playerCounts(game.namespaceId)) {
      if (excludeOutdated && !game.gameModes.includes(row.game_mode)) continue;
      total += row.player_count;
      const mode = (gameModes[row.game_mode] ??= { player_count: 0, regions: {} });
      mode.player_count += row.player_count;
      (mode.regions[row.region_id] ??= { player_count: 0 }).player_count += row.player_count;
    }
    // Production fills in every configured game mode and region with zeros.
    for (const gameMode of game.gameModes) {
      const mode = (gameModes[gameMode] ??= { player_count: 0, regions: {} });
      for (const region of game.regions) mode.regions[region.id] ??= { player_count: 0 };
    }
    return { player_count: total, game_modes: gameModes };
  }
}
