// Lobby routes: create, find, join, list, regions; the lobby token's routes (ready, closed, state, players
// connected and disconnected); player statistics, the logs summary, and the admin stop, join and environment.
import { fail } from '../errors.js';
import { regionUuid } from '../services/ids.js';
import type { LobbyPort } from '../services/environment.js';
import type { LobbyState, StopOptions, StoppedLobby } from '../services/lobbies.js';
import type { FindRequest, LobbyRequest, LobbySeat } from '../services/matchmaking.js';
import { LOBBY_HOSTNAME } from '../services/ports.js';
import type { RateCounter } from '../services/ratelimit.js';
import type { Reply, RequestContext } from './context.js';
import {
  authorization,
  checkJson,
  clientAddress,
  optBoolean,
  optEnum,
  optInteger,
  optObject,
  optString,
  optStringList,
  parseJson,
  queryFlag,
  readJson,
  origin,
  readText,
  reqString,
  type JsonObject,
} from './request.js';

function checkCaptcha(body: JsonObject): void {
  const captcha = optObject(body, 'captcha');
  if (captcha === undefined) return;
  // The emulator has no captcha provider: the shape is checked, any client_response passes.
  for (const provider of ['hcaptcha', 'turnstile']) {
    const entry = optObject(captcha, provider);
    if (entry !== undefined) reqString(entry, 'client_response');
  }
}

function tagsOf(body: JsonObject): Record<string, string> {
  const tagsObject = optObject(body, 'tags') ?? {};
  const tags: Record<string, string> = {};
  for (const [name, value] of Object.entries(tagsObject)) {
    if (typeof value !== 'string') fail('API_BAD_BODY', { reason: `tags.${name} must be a string.` });
    tags[name] = value;
  }
  return tags;
}

/** The shape of a create body (API_BAD_BODY); the service checks the values. */
function lobbyRequest(body: JsonObject): LobbyRequest {
  const gameMode = reqString(body, 'game_mode');
  const regionId = optString(body, 'region');
  const publicity = optEnum(body, 'publicity', ['public', 'private'] as const);
  const maxPlayers = optInteger(body, 'max_players');
  const tags = tagsOf(body);
  checkCaptcha(body);
  return { gameMode, regionId, maxPlayers, publicity, tags, lobbyConfig: body.lobby_config, verificationData: body.verification_data };
}

/** The shape of a find body; an empty game_modes is the service's first check, before auth. */
function findRequest(body: JsonObject): FindRequest {
  const gameModes = optStringList(body, 'game_modes');
  if (gameModes === undefined) fail('API_BAD_BODY', { reason: 'game_modes is required.' });
  const regionIds = optStringList(body, 'regions');
  const preventAutoCreate = optBoolean(body, 'prevent_auto_create_lobby') ?? false;
  const maxPlayers = optInteger(body, 'max_players');
  const tags = tagsOf(body);
  checkCaptcha(body);
  if (gameModes.length === 0) fail('MATCHMAKER_NO_GAME_MODE_PROVIDED');
  return { gameModes, regionIds: regionIds?.length ? regionIds : undefined, preventAutoCreate, tags, maxPlayers, verificationData: body.verification_data };
}

/** The lobby's ports as the join answers give them (MatchmakerJoinPort). */
function portsView(ports: Record<string, LobbyPort>): Record<string, unknown> {
  const view: Record<string, unknown> = {};
  for (const [label, port] of Object.entries(ports)) {
    view[label] =
      'port' in port
        ? { host: `${LOBBY_HOSTNAME}:${port.port}`, hostname: LOBBY_HOSTNAME, port: port.port, is_tls: false }
        : { hostname: LOBBY_HOSTNAME, port_range: { min: port.min, max: port.max }, is_tls: false };
  }
  return view;
}

function seatView(seat: LobbySeat): JsonObject {
  const ports = portsView(seat.ports);
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

function limit(rc: RequestContext, counter: RateCounter): string {
  const address = clientAddress(rc);
  rc.services.rateLimits.take(counter, address);
  return address;
}

/** The client's User-Agent, as the verification call is told it. */
function userAgent(rc: RequestContext): string | null {
  const ua = rc.req.headers['user-agent'];
  return typeof ua === 'string' ? ua : null;
}

/** The routes with nothing to answer send `{}`, as the server does (the spec says 204). */
const EMPTY: Reply = { status: 200, json: {} };

export async function createLobby(rc: RequestContext): Promise<Reply> {
  const address = limit(rc, 'create');
  const { auth, config, matchmaking } = rc.services;
  const { mode, game } = await auth.namespace(authorization(rc), config.tokenless);
  const seat = await matchmaking.create(game, mode, { ...lobbyRequest(await readJson(rc)), userAgent: userAgent(rc) }, address);
  return { status: 200, json: seatView(seat) };
}

export async function findLobby(rc: RequestContext): Promise<Reply> {
  const address = limit(rc, 'find');
  const request = findRequest(await readJson(rc));
  const { auth, config, matchmaking } = rc.services;
  const { mode, game } = await auth.namespace(authorization(rc), config.tokenless);
  return { status: 200, json: seatView(await matchmaking.find(game, mode, { ...request, userAgent: userAgent(rc) }, address)) };
}

export async function joinLobby(rc: RequestContext): Promise<Reply> {
  const address = limit(rc, 'find');
  const body = await readJson(rc);
  const lobbyId = reqString(body, 'lobby_id');
  checkCaptcha(body);
  const { auth, config, matchmaking } = rc.services;
  const { mode, game } = await auth.namespace(authorization(rc), config.tokenless);
  // Not a UUID: no such lobby, as the service answers.
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(lobbyId) && mode !== 'dev')
    fail('MATCHMAKER_LOBBY_NOT_FOUND', { lobby_id: lobbyId });
  const join = { verificationData: body.verification_data, userAgent: userAgent(rc) };
  return { status: 200, json: seatView(await matchmaking.joinById(game, mode, lobbyId.toLowerCase(), address, join)) };
}

export async function listLobbies(rc: RequestContext): Promise<Reply> {
  limit(rc, 'list');
  const includeState = queryFlag(rc, 'include_state');
  const { auth, config, lobbies } = rc.services;
  const { mode, game } = await auth.namespace(authorization(rc), config.tokenless);
  return { status: 200, json: await lobbies.list(game, mode, includeState) };
}

export async function listRegions(rc: RequestContext): Promise<Reply> {
  limit(rc, 'regions');
  const { auth, config, lobbies } = rc.services;
  const { mode, game } = await auth.namespace(authorization(rc), config.tokenless);
  return { status: 200, json: { regions: await lobbies.regions(game, mode) } };
}

export async function lobbyReady(rc: RequestContext): Promise<Reply> {
  limit(rc, 'ready');
  const caller = await rc.services.auth.lobby(authorization(rc));
  // The body is ignored, as the server ignores it.
  rc.req.resume();
  await rc.services.lobbyCalls.ready(caller);
  return EMPTY;
}

export async function lobbyClosed(rc: RequestContext): Promise<Reply> {
  limit(rc, 'lobby');
  const caller = await rc.services.auth.lobby(authorization(rc));
  const closed = optBoolean(await readJson(rc), 'is_closed');
  if (closed === undefined) fail('API_BAD_BODY', { reason: 'is_closed is required.' });
  await rc.services.lobbyCalls.setClosed(caller, closed);
  return EMPTY;
}

export async function setLobbyState(rc: RequestContext): Promise<Reply> {
  limit(rc, 'lobby');
  const caller = await rc.services.auth.lobby(authorization(rc));
  const text = (await readText(rc)).trim();
  // Any JSON value, kept as given and checked as every body is (written back nested deeper, it would fail every
  // read of the lobby); an empty body clears the state.
  if (text !== '') checkJson(parseJson(text));
  await rc.services.lobbyCalls.setState(caller, text === '' ? null : text);
  return EMPTY;
}

export async function getLobbyState(rc: RequestContext): Promise<Reply> {
  limit(rc, 'lobby');
  const { auth, config, lobbyCalls } = rc.services;
  const lobbyId = rc.params.lobby_id!;
  const game = await auth.stateReader(authorization(rc), lobbyId, config.tokenless);
  return { status: 200, json: await lobbyCalls.getState(game, lobbyId) };
}

function playerToken(body: JsonObject): string {
  return reqString(body, 'player_token');
}

export async function playerConnected(rc: RequestContext): Promise<Reply> {
  limit(rc, 'players');
  const caller = await rc.services.auth.lobby(authorization(rc));
  await rc.services.lobbyCalls.playerConnected(caller, playerToken(await readJson(rc)));
  return EMPTY;
}

export async function playerDisconnected(rc: RequestContext): Promise<Reply> {
  limit(rc, 'players');
  const caller = await rc.services.auth.lobby(authorization(rc));
  await rc.services.lobbyCalls.playerDisconnected(caller, playerToken(await readJson(rc)));
  return EMPTY;
}

export async function playerStatistics(rc: RequestContext): Promise<Reply> {
  const { mode, game } = await rc.services.auth.namespace(authorization(rc), false);
  return { status: 200, json: await rc.services.statistics.players(game, mode, queryFlag(rc, 'exclude_outdated')) };
}

export async function getLobbyLogs(rc: RequestContext): Promise<Reply> {
  const { game_id: gameId, namespace_id: namespaceId, lobby_id: lobbyId } = rc.params as Record<string, string>;
  const game = await rc.services.auth.cloud(authorization(rc), gameId);
  return { status: 200, json: lobbySummary(await rc.services.lobbies.get(game, namespaceId!, lobbyId!)) };
}

/** GET …/namespaces/{namespace_id}/logs/lobbies[?before_create_ts=]: the namespace's lobbies, newest first. */
export async function listNamespaceLobbies(rc: RequestContext): Promise<Reply> {
  const { game_id: gameId, namespace_id: namespaceId } = rc.params as Record<string, string>;
  const game = await rc.services.auth.cloud(authorization(rc), gameId);
  const raw = rc.query.get('before_create_ts');
  const before = raw === null ? Infinity : Date.parse(raw);
  if (Number.isNaN(before)) fail('API_BAD_QUERY_PARAMETER', { name: 'before_create_ts', reason: `"${raw}" is not an RFC 3339 time.` });
  const lobbies = await rc.services.lobbies.listNamespace(game, namespaceId!, before, LIST_PAGE);
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
  const state = await rc.services.lobbies.stop(rc.params.lobby_id!, opts, await rc.services.games.ofLobby(rc.params.lobby_id!));
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
  const joined = await rc.services.matchmaking.join(rc.params.lobby_id!);
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

/**
 * GET /_emulator/lobbies/{lobby_id}/env: what production gives the lobby's process (its lobby token included), for
 * a server started by hand; what `gamehost emulator lobby env` prints.
 */
export async function adminLobbyEnv(rc: RequestContext): Promise<Reply> {
  const { games, lobbyCalls } = rc.services;
  const lobbyId = rc.params.lobby_id!;
  const game = await games.ofLobby(lobbyId);
  if (game === undefined) fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
  return { status: 200, json: { lobby_id: lobbyId, env: await lobbyCalls.environment(game, lobbyId, origin(rc)) } };
}
