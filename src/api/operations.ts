// One typed function per operation of the service.
import type { ApiClient } from './client.js';
import { ApiError } from '../errors.js';
import type { FindLobbyRequest, JoinLobbyResponse, ListLobbiesResponse, ListRegionsResponse, EmulatorLobbyEnv,
  CreateBuildRequest,
  CreateBuildResponse,
  CreateLobbyRequest,
  CreateLobbyResponse,
  DeleteLobbyResponse,
  EmulatorBuildsResponse,
  EmulatorCreateGameRequest,
  EmulatorCreatedGame,
  EmulatorDeletedGame,
  EmulatorGamesResponse,
  EmulatorStopLobbyRequest,
  EmulatorStopLobbyResponse,
  ExportHistoryResponse,
  GetGameResponse,
  InspectResponse,
  ListBuildsResponse,
  NamespaceLobbiesResponse,
  LobbyLogsResponse,
  LobbyLogLinesResponse,
  ExportLobbyLogsResponse,
  LogStream,
  NamespaceHistoryResponse,
  NamespaceResponse,
  PlayerStatistics,
  ValidationResponse,
  VersionResponse,
} from './types.js';

const seg = encodeURIComponent;

/** An answer and the text it was parsed from: `--json` prints the text, so the service's numbers stay intact. */
export interface Answer<T> {
  value: T;
  text: string;
}

/** lobbies.create: not idempotent (each call makes a lobby), so never re-sent once it left. */
export function createLobby(api: ApiClient, body: CreateLobbyRequest): Promise<Answer<CreateLobbyResponse>> {
  return api.callWithText({ method: 'POST', path: '/matchmaker/lobbies/create', body, auth: 'namespace', idempotent: false });
}

/** lobbies.find: not idempotent (each call makes a player, maybe a lobby). Answers once the lobby is ready. */
export function findLobby(api: ApiClient, body: FindLobbyRequest): Promise<Answer<JoinLobbyResponse>> {
  return api.callWithText({ method: 'POST', path: '/matchmaker/lobbies/find', body, auth: 'namespace', idempotent: false, untilReady: 'the lobby found' });
}

/** lobbies.join: not idempotent (each call makes a player). */
export function joinLobby(api: ApiClient, lobbyId: string): Promise<Answer<JoinLobbyResponse>> {
  return api.callWithText({ method: 'POST', path: '/matchmaker/lobbies/join', body: { lobby_id: lobbyId }, auth: 'namespace', idempotent: false, untilReady: `lobby ${lobbyId}` });
}

/** lobbies.list */
export function listLobbies(api: ApiClient, includeState: boolean): Promise<Answer<ListLobbiesResponse>> {
  const query = includeState ? { include_state: 'true' } : undefined;
  return api.callWithText({ method: 'GET', path: '/matchmaker/lobbies/list', query, auth: 'namespace', idempotent: true });
}

/** regions.list */
export function listRegions(api: ApiClient): Promise<Answer<ListRegionsResponse>> {
  return api.callWithText({ method: 'GET', path: '/matchmaker/regions', auth: 'namespace', idempotent: true });
}

/** players.getStatistics */
export function getStatistics(api: ApiClient): Promise<Answer<PlayerStatistics>> {
  return api.callWithText({ method: 'GET', path: '/matchmaker/players/statistics', auth: 'namespace', idempotent: true });
}

/** games.namespaces.logs.getNamespaceLobby */
export function getLobbyLogs(api: ApiClient, lobbyId: string, opts: { signal?: AbortSignal } = {}): Promise<Answer<LobbyLogsResponse>> {
  const path = `/cloud/games/${seg(api.gameId())}/namespaces/${seg(api.namespaceId())}/logs/lobbies/${seg(lobbyId)}`;
  return api.callWithText({ method: 'GET', path, auth: 'cloud', idempotent: true, signal: opts.signal });
}

/** The longest the service holds a watch of log lines before it answers (SERVICE-FACTS: 40 s). */
export const LOG_WATCH_HOLD_MS = 40_000;

/**
 * cloud.games.matchmaker.getLobbyLogs: the lobby's most recent lines of one stream; with `watchIndex` (the
 * `watch.index` of an earlier answer) the lines after it, the service holding the request until one arrives (up to
 * 40 s). `signal` ends a watch early. Not the summary: that is getLobbyLogs (games.namespaces.logs.getNamespaceLobby).
 */
export function getLobbyLogLines(
  api: ApiClient,
  lobbyId: string,
  stream: LogStream,
  opts: { watchIndex?: string; signal?: AbortSignal } = {},
): Promise<Answer<LobbyLogLinesResponse>> {
  const path = `/cloud/games/${seg(api.gameId())}/matchmaker/lobbies/${seg(lobbyId)}/logs`;
  const query: Record<string, string> = { stream };
  if (opts.watchIndex !== undefined) query.watch_index = opts.watchIndex;
  const holdMs = opts.watchIndex === undefined ? undefined : LOG_WATCH_HOLD_MS;
  return api.callWithText({ method: 'GET', path, query, auth: 'cloud', idempotent: true, holdMs, signal: opts.signal });
}

/** cloud.games.matchmaker.exportLobbyLogs: a presigned link to the whole stream (stdout.txt, stderr.txt). Asking twice is harmless. */
export function exportLobbyLogLines(api: ApiClient, lobbyId: string, stream: LogStream): Promise<ExportLobbyLogsResponse> {
  const path = `/cloud/games/${seg(api.gameId())}/matchmaker/lobbies/${seg(lobbyId)}/logs/export`;
  return api.call({ method: 'POST', path, body: { stream }, auth: 'cloud', idempotent: true });
}

/** cloud.games.builds.listGameBuilds */
export function listBuilds(api: ApiClient): Promise<Answer<ListBuildsResponse>> {
  return api.callWithText({ method: 'GET', path: `/cloud/games/${seg(api.gameId())}/builds`, auth: 'cloud', idempotent: true });
}

/** cloud.games.matchmaker.deleteMatchmakerLobby: stops the lobby now. Asking twice is harmless. */
export function deleteLobby(api: ApiClient, lobbyId: string): Promise<Answer<DeleteLobbyResponse>> {
  return api.callWithText({ method: 'DELETE', path: `/cloud/games/${seg(api.gameId())}/matchmaker/lobbies/${seg(lobbyId)}`, auth: 'cloud', idempotent: true });
}

/** cloud.games.namespaces.logs.listNamespaceLobbies: the newest lobbies of the namespace. */
export function listNamespaceLobbies(api: ApiClient, opts: { attempts?: number } = {}): Promise<NamespaceLobbiesResponse> {
  const path = `/cloud/games/${seg(api.gameId())}/namespaces/${seg(api.namespaceId())}/logs/lobbies`;
  return api.call({ method: 'GET', path, auth: 'cloud', idempotent: true, ...opts });
}

/** cloud.auth.inspect: the agent the cloud token stands for (a game's token: its game id). */
export function inspectToken(api: ApiClient): Promise<InspectResponse> {
  return api.call({ method: 'GET', path: '/cloud/auth/inspect', auth: 'cloud', idempotent: true });
}

/** cloud.games.getGameById: the game, with the regions its lobbies run in. `attempts` 1 for a lookup a command can do without. */
export function getGame(api: ApiClient, opts: { attempts?: number } = {}): Promise<GetGameResponse> {
  return api.call({ method: 'GET', path: `/cloud/games/${seg(api.gameId())}`, auth: 'cloud', idempotent: true, ...opts });
}

/** cloud.games.getGameById with the text it was parsed from, for --json. */
export function getGameText(api: ApiClient): Promise<Answer<GetGameResponse>> {
  return api.callWithText({ method: 'GET', path: `/cloud/games/${seg(api.gameId())}`, auth: 'cloud', idempotent: true });
}

const namespacePath = (api: ApiClient, namespaceId: string) => `/cloud/games/${seg(api.gameId())}/namespaces/${seg(namespaceId)}`;

/** cloud.games.namespaces.getGameNamespaceById */
export function getNamespace(api: ApiClient, namespaceId: string): Promise<Answer<NamespaceResponse>> {
  return api.callWithText({ method: 'GET', path: namespacePath(api, namespaceId), auth: 'cloud', idempotent: true });
}

/** cloud.games.namespaces.createGameNamespace: not idempotent (a second call is refused: the name id is taken). */
export function createNamespace(api: ApiClient, body: { name_id: string; display_name: string; version_id: string }): Promise<Answer<{ namespace_id: string }>> {
  return api.callWithText({ method: 'POST', path: `/cloud/games/${seg(api.gameId())}/namespaces`, body, auth: 'cloud', idempotent: false });
}

/** cloud.games.namespaces.updateGameNamespaceVersion: deploys the version. Asking twice is harmless. */
export function setNamespaceVersion(api: ApiClient, namespaceId: string, versionId: string): Promise<unknown> {
  return api.call({ method: 'PUT', path: `${namespacePath(api, namespaceId)}/version`, body: { version_id: versionId }, auth: 'cloud', idempotent: true });
}

/** cloud.games.namespaces.GetGameNamespaceVersionHistoryList: the deploys, newest first. */
export function namespaceHistory(api: ApiClient, namespaceId: string, limit: number): Promise<Answer<NamespaceHistoryResponse>> {
  return api.callWithText({ method: 'GET', path: `${namespacePath(api, namespaceId)}/version-history`, query: { limit: String(limit) }, auth: 'cloud', idempotent: true });
}

/** cloud.games.namespaces.updateGameNamespaceMatchmakerConfig. Asking twice is harmless. */
export function setNamespaceMatchmakerConfig(api: ApiClient, namespaceId: string, body: { lobby_count_max: number; max_players: number }): Promise<unknown> {
  return api.call({ method: 'POST', path: `${namespacePath(api, namespaceId)}/mm-config`, body, auth: 'cloud', idempotent: true });
}

/** cloud.games.namespaces.createGameNamespaceToken{Public,Development}: each call a new token. */
export function createNamespaceToken(
  api: ApiClient,
  namespaceId: string,
  kind: 'public' | 'development',
  body?: { hostname: string; ports?: Record<string, { port: number; protocol: string }> },
): Promise<{ token: string }> {
  return api.call({ method: 'POST', path: `${namespacePath(api, namespaceId)}/tokens/${kind}`, body, auth: 'cloud', idempotent: false });
}

/** cloud.games.versions.getGameVersionById */
export function getVersion(api: ApiClient, versionId: string): Promise<Answer<VersionResponse>> {
  return api.callWithText({ method: 'GET', path: `/cloud/games/${seg(api.gameId())}/versions/${seg(versionId)}`, auth: 'cloud', idempotent: true });
}

/** cloud.games.versions.validateGameVersion: every error as its path. Asking twice is harmless. */
export function validateVersion(api: ApiClient, body: { display_name: string; config: unknown }): Promise<ValidationResponse> {
  return api.call({ method: 'POST', path: `/cloud/games/${seg(api.gameId())}/versions/validate`, body, auth: 'cloud', idempotent: true });
}

/** cloud.games.versions.createGameVersion: not idempotent (a second call is refused: the name is taken). */
export function createVersion(api: ApiClient, body: { display_name: string; config: unknown }): Promise<{ version_id: string }> {
  return api.call({ method: 'POST', path: `/cloud/games/${seg(api.gameId())}/versions`, body, auth: 'cloud', idempotent: false });
}

/** cloud.games.versions.reserveVersionName: the day's next name. Not idempotent: each call reserves one more. */
export function reserveVersionName(api: ApiClient): Promise<{ version_display_name: string }> {
  return api.call({ method: 'POST', path: `/cloud/games/${seg(api.gameId())}/versions/reserve-name`, auth: 'cloud', idempotent: false });
}

/** games.matchmaker.exportMatchmakerLobbyHistory; times in ms since the epoch. Asking twice is harmless. */
export function exportLobbyHistory(
  api: ApiClient,
  window: { query_start: number; query_end: number },
): Promise<ExportHistoryResponse> {
  const path = `/cloud/games/${seg(api.gameId())}/matchmaker/lobbies/export-history`;
  return api.call({ method: 'POST', path, body: window, auth: 'cloud', idempotent: true });
}

/** games.builds.createGameBuild: not idempotent (a second call makes a second build). */
export function createBuild(api: ApiClient, body: CreateBuildRequest): Promise<CreateBuildResponse> {
  const path = `/cloud/games/${seg(api.gameId())}/builds`;
  return api.call({ method: 'POST', path, body, auth: 'cloud', idempotent: false });
}

/** The answer to a complete while another completion of the same upload is assembling it (429, Retry-After). */
export function isCompleteInProgress(err: unknown): err is ApiError {
  return err instanceof ApiError && err.code === 'UPLOAD_COMPLETE_IN_PROGRESS';
}

/**
 * cloud.uploads.completeUpload: the service answers 204 (spec) or 200 `{}` (server); both are fine. Another
 * completion in progress comes back as isCompleteInProgress, unretried: the caller says so and waits for it.
 */
export async function completeUpload(api: ApiClient, uploadId: string): Promise<void> {
  await api.call({ method: 'POST', path: `/cloud/uploads/${seg(uploadId)}/complete`, body: {}, auth: 'cloud', idempotent: true, handledByCaller: isCompleteInProgress });
}

/** The emulator's admin API: the builds of a game (default the seeded one), newest first. */
export function listEmulatorBuilds(api: ApiClient, gameId?: string): Promise<EmulatorBuildsResponse> {
  const query = gameId === undefined ? undefined : { game_id: gameId };
  return api.call({ method: 'GET', path: '/_emulator/builds', query, auth: 'admin', idempotent: true });
}

/** The emulator's admin API: deletes a build, its records and its bytes. Deleting twice answers 404. */
export function deleteEmulatorBuild(api: ApiClient, buildId: string): Promise<{ build_id: string; game_id: string }> {
  return api.call({ method: 'DELETE', path: `/_emulator/builds/${seg(buildId)}`, auth: 'admin', idempotent: true });
}

/** The emulator's admin API: stops a lobby as if its process had exited. Stopping twice keeps the first stop. */
export function stopEmulatorLobby(api: ApiClient, lobbyId: string, body: EmulatorStopLobbyRequest): Promise<EmulatorStopLobbyResponse> {
  return api.call({ method: 'POST', path: `/_emulator/lobbies/${seg(lobbyId)}/stop`, body, auth: 'admin', idempotent: true });
}

/** The emulator's admin API: the environment production gives a lobby's process (its lobby token included). */
export function emulatorLobbyEnv(api: ApiClient, lobbyId: string): Promise<EmulatorLobbyEnv> {
  return api.call({ method: 'GET', path: `/_emulator/lobbies/${seg(lobbyId)}/env`, auth: 'admin', idempotent: true });
}

/** The emulator's admin API: a game for one CI job, with its tokens. Not idempotent: each call makes a game. */
export function createEmulatorGame(api: ApiClient, body: EmulatorCreateGameRequest): Promise<EmulatorCreatedGame> {
  return api.call({ method: 'POST', path: '/_emulator/games', body, auth: 'admin', idempotent: false });
}

/** The emulator's admin API: its games, the seeded one first (no tokens). */
export function listEmulatorGames(api: ApiClient): Promise<EmulatorGamesResponse> {
  return api.call({ method: 'GET', path: '/_emulator/games', auth: 'admin', idempotent: true });
}

/** The emulator's admin API: deletes a game with everything it holds; a second delete answers 404. */
export function deleteEmulatorGame(api: ApiClient, gameId: string): Promise<EmulatorDeletedGame> {
  return api.call({ method: 'DELETE', path: `/_emulator/games/${seg(gameId)}`, auth: 'admin', idempotent: true });
}
