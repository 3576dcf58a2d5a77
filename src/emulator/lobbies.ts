// Lobbies: create, player statistics, the logs summary with metrics, and the admin stop.
import { randomUUID } from 'node:crypto';
import { requireCloud, requireNamespace } from './auth.js';
import {
  optBoolean,
  optEnum,
  optInteger,
  optObject,
  optString,
  readJson,
  reqString,
  type JsonObject,
} from './body.js';
import type { EmulatorConfig } from './config.js';
import type { Reply, RequestContext } from './context.js';
import { fail } from './errors.js';
import { NAMESPACE_ID, regionUuid } from './ids.js';
import { lobbyMetrics } from './metrics.js';
import type { LobbyRow, Store } from './store.js';
import { signPlayerToken } from './tokens.js';

export const DEFAULT_MAX_PLAYERS = 32;
export const MAX_PLAYERS_LIMIT = 256;
const MAX_TAGS = 8;
const MAX_TAG_NAME_BYTES = 128;
const MAX_TAG_VALUE_BYTES = 512;
const NIL_UUID = '00000000-0000-0000-0000-000000000000';
const LOBBY_HOSTNAME = '127.0.0.1';

interface LobbyInput {
  gameMode: string;
  region: { id: string; name: string };
  maxPlayers: number;
  publicity: 'public' | 'private';
  tags: Record<string, string>;
  lobbyConfig: unknown;
}

function checkCaptcha(body: JsonObject): void {
  const captcha = optObject(body, 'captcha');
  if (captcha === undefined) return;
  // The emulator has no captcha provider: the shape is checked, any client_response passes.
  for (const provider of ['hcaptcha', 'turnstile']) {
    const entry = optObject(captcha, provider);
    if (entry !== undefined) reqString(entry, 'client_response');
  }
}

/** Validates in the production order: shape (API_BAD_BODY), game mode, tags, max players, region. */
function parseCreateLobby(body: JsonObject, config: EmulatorConfig): LobbyInput {
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

  if (!config.gameModes.includes(gameMode)) fail('MATCHMAKER_GAME_MODE_NOT_FOUND', { game_mode: gameMode });
  const tagNames = Object.keys(tags);
  if (tagNames.length > MAX_TAGS) fail('MATCHMAKER_TOO_MANY_TAGS', { count: tagNames.length });
  // Production measures tag lengths in bytes (Rust String::len).
  for (const name of tagNames) {
    if (Buffer.byteLength(name) > MAX_TAG_NAME_BYTES) fail('MATCHMAKER_TAG_NAME_TOO_LONG');
    if (Buffer.byteLength(tags[name]!) > MAX_TAG_VALUE_BYTES) fail('MATCHMAKER_TAG_TOO_LONG', { name });
  }
  if (maxPlayers !== undefined && (maxPlayers < 1 || maxPlayers > MAX_PLAYERS_LIMIT))
    fail('MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID', { max: MAX_PLAYERS_LIMIT });
  // No geo-location here: "closest region" is the first configured one.
  const region = regionId === undefined ? config.regions[0]! : config.regions.find((r) => r.id === regionId);
  if (region === undefined) fail('MATCHMAKER_REGION_NOT_FOUND', { region: regionId ?? '' });

  return {
    gameMode,
    region,
    maxPlayers: maxPlayers ?? DEFAULT_MAX_PLAYERS,
    publicity,
    tags,
    lobbyConfig: body.lobby_config,
  };
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

function joinResponse(
  lobbyId: string,
  region: { region_id: string; display_name: string },
  playerToken: string,
): JsonObject {
  const ports = lobbyPorts(lobbyId);
  const player = { token: playerToken };
  // `lobby.ports` and `lobby.player` are deprecated duplicates the spec still requires.
  return { lobby: { lobby_id: lobbyId, region, ports, player }, ports, player };
}

export async function createLobby(rc: RequestContext): Promise<Reply> {
  const { config, secret, store } = rc.emu;
  const mode = requireNamespace(rc, config.tokenless);
  const input = parseCreateLobby(await readJson(rc), config);
  const playerId = randomUUID();
  const iat = Math.floor(rc.now / 1000);

  if (mode === 'dev') {
    // Development tokens get a well-formed answer for a lobby that does not exist, as production does.
    const token = signPlayerToken(secret, { player_id: playerId, lobby_id: NIL_UUID, namespace_id: NAMESPACE_ID, iat });
    return { status: 200, json: joinResponse(NIL_UUID, { region_id: 'local', display_name: 'Local' }, token) };
  }

  const lobbyId = randomUUID();
  const startTs = rc.now + config.startDelayMs;
  const readyTs = startTs + config.readyDelayMs;
  const idle = config.idleLifetimeMs > 0 ? config.idleLifetimeMs : null;
  store.insertLobby(
    {
      lobby_id: lobbyId,
      namespace_id: NAMESPACE_ID,
      game_mode: input.gameMode,
      region_id: input.region.id,
      region_name: input.region.name,
      max_players: input.maxPlayers,
      publicity: input.publicity,
      tags: JSON.stringify(input.tags),
      lobby_config: input.lobbyConfig === undefined ? null : JSON.stringify(input.lobbyConfig),
      create_ts: rc.now,
      start_ts: startTs,
      ready_ts: readyTs,
      stop_ts: null,
      exit_code: null,
      failed: null,
      idle_lifetime_ms: idle,
      idle_stop_ts: idle === null ? null : readyTs + idle,
    },
    playerId,
  );
  const token = signPlayerToken(secret, { player_id: playerId, lobby_id: lobbyId, namespace_id: NAMESPACE_ID, iat });
  return {
    status: 200,
    json: joinResponse(lobbyId, { region_id: input.region.id, display_name: input.region.name }, token),
  };
}

export function playerStatistics(rc: RequestContext): Reply {
  const { config, store } = rc.emu;
  const mode = requireNamespace(rc, false);
  const flag = rc.query.get('exclude_outdated');
  if (flag !== null && flag !== 'true' && flag !== 'false')
    fail('API_BAD_QUERY_PARAMETER', { name: 'exclude_outdated', reason: 'expected true or false.' });
  if (mode === 'dev') return { status: 200, json: { player_count: 0, game_modes: {} } };
  store.expireIdle(rc.now);

  // "Outdated" lobbies belong to game modes the current config no longer has.
  const excludeOutdated = flag === 'true';
  let total = 0;
  const gameModes: Record<string, { player_count: number; regions: Record<string, { player_count: number }> }> = {};
  for (const row of store.playerCounts(NAMESPACE_ID)) {
    if (excludeOutdated && !config.gameModes.includes(row.game_mode)) continue;
    total += row.player_count;
    const mode = (gameModes[row.game_mode] ??= { player_count: 0, regions: {} });
    mode.player_count += row.player_count;
    (mode.regions[row.region_id] ??= { player_count: 0 }).player_count += row.player_count;
  }
  // Production fills in every configured game mode and region with zeros.
  for (const gameMode of config.gameModes) {
    const mode = (gameModes[gameMode] ??= { player_count: 0, regions: {} });
    for (const region of config.regions) mode.regions[region.id] ??= { player_count: 0 };
  }
  return { status: 200, json: { player_count: total, game_modes: gameModes } };
}

const iso = (ms: number): string => new Date(ms).toISOString();

/** The logs summary (CloudGamesNamespacesGetNamespaceLobbyResponse) of a lobby as seen at `now`. */
export function lobbySummary(row: LobbyRow, now: number): JsonObject {
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
  if (row.stop_ts === null && row.start_ts <= now) response.metrics = lobbyMetrics(row.lobby_id, row.start_ts, now);
  response.stdout_presigned_urls = [];
  response.stderr_presigned_urls = [];
  response.perf_lists = [];
  return response;
}

export function getLobbyLogs(rc: RequestContext): Reply {
  const { game_id: gameId, namespace_id: namespaceId, lobby_id: lobbyId } = rc.params as Record<string, string>;
  requireCloud(rc, gameId);
  if (namespaceId !== NAMESPACE_ID) fail('API_NOT_FOUND', { what: `Namespace ${namespaceId}` });
  rc.emu.store.expireIdle(rc.now);
  const row = rc.emu.store.getLobby(lobbyId!);
  // Production answers 500 for an unknown lobby here; 404 tells the user what happened.
  if (row === undefined || row.namespace_id !== namespaceId) fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
  return { status: 200, json: lobbySummary(row, rc.now) };
}

export interface StopOptions {
  exitCode?: number;
  failed?: boolean;
}

/**
 * Stops a lobby (idempotent: a stopped lobby keeps its first stop) and returns its summary, with
 * `already_stopped` true when this call changed nothing; null if the lobby is unknown.
 */
export function stopLobbyInStore(store: Store, lobbyId: string, opts: StopOptions, now: number): JsonObject | null {
  const exitCode = opts.exitCode ?? 0;
  // A lobby that already stopped by itself keeps that stop.
  store.expireIdle(now);
  const stopped = store.stopLobby(lobbyId, now, exitCode, opts.failed ?? exitCode !== 0);
  const row = store.getLobby(lobbyId);
  return row === undefined ? null : { ...lobbySummary(row, now), already_stopped: !stopped };
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
  const summary = stopLobbyInStore(rc.emu.store, rc.params.lobby_id!, opts, rc.now);
  if (summary === null) fail('API_NOT_FOUND', { what: `Lobby ${rc.params.lobby_id}` });
  return { status: 200, json: summary };
}

/**
 * POST /_emulator/lobbies/{lobby_id}/players: a player joins, as the service's join would let them, so that
 * max_players and the idle lifetime have something to act on. Answers the player's token and the new count.
 */
export async function adminJoinLobby(rc: RequestContext): Promise<Reply> {
  // No fields yet, but the body rules (known length, a JSON object) hold as on every POST.
  await readJson(rc, { emptyIsObject: true });
  const lobbyId = rc.params.lobby_id!;
  const playerId = randomUUID();
  const outcome = rc.emu.store.joinLobby(lobbyId, playerId, rc.now);
  if (outcome.kind === 'not_found') fail('API_NOT_FOUND', { what: `Lobby ${lobbyId}` });
  if (outcome.kind === 'stopped') fail('MATCHMAKER_LOBBY_STOPPED', { lobby_id: lobbyId });
  if (outcome.kind === 'full') fail('MATCHMAKER_LOBBY_FULL', { lobby_id: lobbyId, max: outcome.lobby.max_players });
  const token = signPlayerToken(rc.emu.secret, {
    player_id: playerId,
    lobby_id: lobbyId,
    namespace_id: outcome.lobby.namespace_id,
    iat: Math.floor(rc.now / 1000),
  });
  return {
    status: 200,
    json: { lobby_id: lobbyId, player: { token }, player_count: outcome.players, max_players: outcome.lobby.max_players },
  };
}
