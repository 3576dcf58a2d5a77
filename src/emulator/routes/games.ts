// Games: the cloud game (cloud_games_getGameById) of the token's game, its namespace and version, and the regions
// lobbies run in, which is how a client turns a lobby's region UUID into a name; and the admin routes for games
// per CI job: create (with its tokens), list (without), delete.
import { fail } from '../errors.js';
import type { Game, GameRequest } from '../services/games.js';
import { SEEDED_CREATE_TS, regionUuid, stableUuid } from '../services/ids.js';
import { namespaceSummary } from './namespaces.js';
import type { Reply, RequestContext } from './context.js';
import { authorization, optInteger, optString, readJson, type JsonObject } from './request.js';


const iso = (ms: number): string => new Date(ms).toISOString();

/** GET /cloud/auth/inspect: a game's cloud token is the agent of that game. */
export async function inspect(rc: RequestContext): Promise<Reply> {
  const game = await rc.services.auth.cloud(authorization(rc), undefined);
  return { status: 200, json: { agent: { game_cloud: { game_id: game.gameId } } } };
}

export async function getGame(rc: RequestContext): Promise<Reply> {
  const { auth, statistics } = rc.services;
  const g = await auth.cloud(authorization(rc), rc.params.game_id);
  // `watch_index` asks the service to hold the answer until the game changes; the emulator never holds one:
  // every answer comes at once, as index 0.
  const { player_count: players } = await statistics.players(g, 'public', false);
  const created = iso(g.seeded ? SEEDED_CREATE_TS : g.createTs);
  const game = {
    game_id: g.gameId,
    create_ts: created,
    name_id: 'game',
    display_name: g.name || 'Emulated game',
    developer_group_id: stableUuid('group', 'developer'),
    total_player_count: players,
    namespaces: (await rc.services.namespaces.list(g)).map(namespaceSummary),
    versions: (await rc.services.versions.list(g)).map((v) => ({ version_id: v.version_id, create_ts: iso(v.create_ts), display_name: v.display_name })),
    available_regions: g.regions.map((r) => ({
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

function optNames(body: JsonObject, field: string): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) fail('API_BAD_BODY', { reason: `${field} must be a list of strings.` });
  return v as string[];
}

export function gameView(g: Game): JsonObject {
  return {
    game_id: g.gameId,
    namespace_id: g.namespaceId,
    name: g.name,
    game_modes: g.gameModes,
    regions: g.regions,
    seeded: g.seeded,
    create_ts: g.seeded ? null : iso(g.createTs),
    expire_ts: g.expireTs === null ? null : iso(g.expireTs),
  };
}

/** POST /_emulator/games `{"name", "game_modes", "regions", "ttl_seconds"}` (all optional): the game and its tokens. */
export async function adminCreateGame(rc: RequestContext): Promise<Reply> {
  const body = await readJson(rc, { emptyIsObject: true });
  const request: GameRequest = { name: optString(body, 'name') ?? '' };
  const gameModes = optNames(body, 'game_modes');
  const regions = optNames(body, 'regions');
  const ttlSeconds = optInteger(body, 'ttl_seconds');
  if (gameModes !== undefined) request.gameModes = gameModes;
  if (regions !== undefined) request.regions = regions;
  if (ttlSeconds !== undefined) request.ttlMs = ttlSeconds * 1000;
  const { game, tokens } = await rc.services.games.create(request);
  return { status: 200, json: { ...gameView(game), tokens } };
}

export async function adminListGames(rc: RequestContext): Promise<Reply> {
  return { status: 200, json: { games: (await rc.services.games.list()).map(gameView) } };
}

export async function adminDeleteGame(rc: RequestContext): Promise<Reply> {
  const gameId = rc.params.game_id!;
  const deleted = await rc.services.games.delete(gameId);
  return { status: 200, json: { game_id: gameId, deleted } };
}
