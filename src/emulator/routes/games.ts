// Admin routes for games per CI job: create (with its tokens), list (without), delete.
import { fail } from '../errors.js';
import type { GameInfo, GameRequest } from '../services/games.js';
import type { Reply, RequestContext } from './context.js';
import { optInteger, optString, readJson, type JsonObject } from './request.js';

function optNames(body: JsonObject, field: string): string[] | undefined {
  const v = body[field];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || !v.every((s) => typeof s === 'string')) fail('API_BAD_BODY', { reason: `${field} must be a list of strings.` });
  return v as string[];
}

const iso = (ms: number): string => new Date(ms).toISOString();

export function gameView(g: GameInfo): JsonObject {
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
