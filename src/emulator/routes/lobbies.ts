// Lobby routes: create, player statistics, the logs summary, and the admin stop and join.
import { fail } from '../errors.js';
import { regionUuid } from '../services/ids.js';
import type { LobbyRequest, LobbySeat, LobbyState, StopOptions, StoppedLobby } from '../services/lobbies.js';
import type { Reply, RequestContext } from './context.js';
import {
  authorization,
  optBoolean,
  optEnum,
  optInteger,
  optObject,
  optString,
  readJson,
  reqString,
  type JsonObject,
} from './request.js';

const LOBBY_HOSTNAME = '127.0.0.1';

function checkCaptcha(body: JsonObject): void {
  const captcha = optObject(body, 'captcha');
  if (captcha === undefined) return;
  // The emulator has no captcha provider: the shape is checked, any client_response passes.
  for (const provider of ['hcaptcha', 'turnstile']) {
    const entry = optObject(captcha, provider);
    if (entry !== undefined) reqString(entry, 'client_response');
  }
}

/** The shape of a create body (API_BAD_BODY); the service checks the values. */
function lobbyRequest(body: JsonObject): LobbyRequest {
  const gameMode = reqString(body, 'game_mode');
  const regionId = optString(body, 'region');
  const publicity = optEnum(body, 'publicity', ['public', 'private'] as const) ?? 'public';
  const maxPlayers = optInteger(body, 'max_players');
  const tagsObject = optObject(body, 'tags') ?? {};
  const tags: Record<string, string> = {};
  for (const [name, value] of Object.entries(tagsObject)) {
    if (typeof value !== 'string') fail('API_BAD_BODY', { reason: `tags.${name} must be a string.` });
    tags[name] = value;
  }
  checkCaptcha(body);
  return { gameMode, regionId, maxPlayers, publicity, tags, lobbyConfig: body.lobby_config };
}

/** A port per lobby picked from its id, so repeated reads agree; nothing listens on it. */
function lobbyPorts(lobbyId: string): Record<string, unknown> {
  const h = parseInt(lobbyId.replace(/-/g, '').slice(-8), 16) >>> 0;
  const port = 20000 + (h % 10000);
  const rangeMin = 40000 + ((h >>> 14) % 2000) * 10;
  return {
    default: { host: `${LOBBY_HOSTNAME}:${port}`, hostname: LOBBY_HOSTNAME, port, is_tls: false },
    'game-range': { hostname: LOBBY_HOSTNAME, port_range: { min: rangeMin, max: rangeMin + 9 }, is_tls: false },
  };
}

function seatView(seat: LobbySeat): JsonObject {
  const ports = lobbyPorts(seat.lobbyId);
  const player = { token: seat.playerToken };
  const region = { region_id: seat.region.id, display_name: seat.region.name };
  // `lobby.ports` and `lobby.player` are deprecated duplicates the spec still requires.
  return { lobby: { lobby_id: seat.lobbyId, region, ports, player }, ports, player };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The logs summary (CloudGamesNamespacesGetNamespaceLobbyResponse) of a lobby as seen at `now`. */
export function lobbySummary({ lobby: row, now, metrics }: LobbyState): JsonObject {
  // Timestamps only appear once reached, and a stopped lobby reaches nothing after its stop.
  const until = row.stop_ts ?? now;
  const lobby: JsonObject = {
    lobby_id: row.lobby_id,
    namespace_id: row.namespace_id,
    lobby_group_name_id: row.game_mode,
    region_id: regionUuid(row.region_id),
    create_ts: iso(row.create_ts),
  };
  if (row.start_ts <= until) lobby.start_ts = iso(row.start_ts);
  if (row.ready_ts <= until) lobby.ready_ts = iso(row.ready_ts);
  // The spec requires `running`; production sends it as null beside `stopped`.
  lobby.status =
    row.stop_ts === null
      ? { running: {} }
      : {
          running: null,
          stopped: { stop_ts: iso(row.stop_ts), failed: row.failed === 1, exit_code: row.exit_code ?? 0 },
        };
  const response: JsonObject = { lobby };
  if (metrics !== undefined) response.metrics = metrics;
  response.stdout_presigned_urls = [];
  response.stderr_presigned_urls = [];
  response.perf_lists = [];
  return response;
}

/** The answer to a stop: the logs summary, and whether the lobby had already stopped. */
export function stopView(state: StoppedLobby): JsonObject {
  return { ...lobbySummary(state), already_stopped: state.alreadyStopped };
}

export async function createLobby(rc: RequestContext): Promise<Reply> {
  const { auth, config, lobbies } = rc.services;
  const { mode, game } = await auth.namespace(authorization(rc), config.tokenless);
  const seat = await lobbies.create(game, mode, lobbyRequest(await readJson(rc)));
  return { status: 200, json: seatView(seat) };
}

export async function playerStatistics(rc: RequestContext): Promise<Reply> {
  const { mode, game } = await rc.services.auth.namespace(authorization(rc), false);
  const flag = rc.query.get('exclude_outdated');
  if (flag !== null && flag !== 'true' && flag !== 'false')
    fail('API_BAD_QUERY_PARAMETER', { name: 'exclude_outdated', reason: 'expected true or false.' });
  return { status: 200, json: await rc.services.statistics.players(game, mode, flag === 'true') };
}

export async function getLobbyLogs(rc: RequestContext): Promise<Reply> {
  const { game_id: gameId, namespace_id: namespaceId, lobby_id: lobbyId } = rc.params as Record<string, string>;
  const game = await rc.services.auth.cloud(authorization(rc), gameId);
  return { status: 200, json: lobbySummary(await rc.services.lobbies.get(game, namespaceId!, lobbyId!)) };
}

/** GET …/namespaces/{namespace_id}/logs/lobbies[?before_create_ts=]: the namespace's lobbies, newest first. */
export async function listLobbies(rc: RequestContext): Promise<Reply> {
  const { game_id: gameId, namespace_id: namespaceId } = rc.params as Record<string, string>;
  const game = await rc.services.auth.cloud(authorization(rc), gameId);
  const raw = rc.query.get('before_create_ts');
  const before = raw === null ? Infinity : Date.parse(raw);
  if (Number.isNaN(before)) fail('API_BAD_QUERY_PARAMETER', { name: 'before_create_ts', reason: `"${raw}" is not an RFC 3339 time.` });
  const lobbies = await rc.services.lobbies.list(game, namespaceId!, before, LIST_PAGE);
  return { status: 200, json: { lobbies: lobbies.map((state) => lobbySummary(state).lobby as JsonObject) } };
}

/** A page of the lobby list, as production pages it. */
const LIST_PAGE = 100;

/** DELETE /cloud/games/{game_id}/matchmaker/lobbies/{lobby_id}: stops the lobby now; did_remove false when it had stopped. */
export async function deleteLobby(rc: RequestContext): Promise<Reply> {
  const game = await rc.services.auth.cloud(authorization(rc), rc.params.game_id!);
  return { status: 200, json: { did_remove: await rc.services.lobbies.remove(game, rc.params.lobby_id!) } };
}

export async function adminStopLobby(rc: RequestContext): Promise<Reply> {
  const body = await readJson(rc, { emptyIsObject: true });
  const exitCode = optInteger(body, 'exit_code');
  if (exitCode !== undefined && (exitCode < -2147483648 || exitCode > 2147483647))
    fail('API_BAD_BODY', { reason: 'exit_code must be a 32-bit integer.' });
  const failed = optBoolean(body, 'failed');
  const opts: StopOptions = {};
  if (exitCode !== undefined) opts.exitCode = exitCode;
  if (failed !== undefined) opts.failed = failed;
  const state = await rc.services.lobbies.stop(rc.params.lobby_id!, opts);
  if (state === null) fail('API_NOT_FOUND', { what: `Lobby ${rc.params.lobby_id}` });
  return { status: 200, json: stopView(state) };
}

/**
 * POST /_emulator/lobbies/{lobby_id}/players: a player joins, as the service's join would let them, so that
 * max_players and the idle lifetime have something to act on. Answers the player's token and the new count.
 */
export async function adminJoinLobby(rc: RequestContext): Promise<Reply> {
  // No fields yet, but the body rules (known length, a JSON object) hold as on every POST.
  await readJson(rc, { emptyIsObject: true });
  const joined = await rc.services.lobbies.join(rc.params.lobby_id!);
  return {
    status: 200,
    json: {
      lobby_id: joined.lobbyId,
      player: { token: joined.playerToken },
      player_count: joined.players,
      max_players: joined.maxPlayers,
    },
  };
}
