// Wire types, named as the service's OpenAPI spec names them (snake_case fields).

export interface LobbyRegion {
  region_id: string;
  display_name: string;
}

export interface PortRange {
  min: number;
  max: number;
}

export interface JoinPort {
  host?: string | null;
  hostname: string;
  port?: number | null;
  port_range?: PortRange | null;
  is_tls: boolean;
}

export interface CreateLobbyRequest {
  game_mode: string;
  region?: string;
  publicity?: 'public' | 'private';
  tags?: Record<string, string>;
  max_players?: number;
  lobby_config?: unknown;
  verification_data?: unknown;
  captcha?: { hcaptcha?: { client_response: string }; turnstile?: { client_response: string } };
}

export interface CreateLobbyResponse {
  lobby: { lobby_id: string; region: LobbyRegion };
  ports: Record<string, JoinPort>;
  player: { token: string };
}

/** lobbies.find and lobbies.join answer as create does. */
export type JoinLobbyResponse = CreateLobbyResponse;

export interface FindLobbyRequest {
  game_modes: string[];
  regions?: string[];
  prevent_auto_create_lobby?: boolean;
  tags?: Record<string, string>;
  max_players?: number;
}

export interface RegionInfo {
  region_id: string;
  provider_display_name: string;
  region_display_name: string;
  datacenter_coord: { latitude: number; longitude: number };
  datacenter_distance_from_client: { kilometers: number; miles: number };
}

export interface LobbyInfo {
  region_id: string;
  game_mode_id: string;
  lobby_id: string;
  max_players_normal: number;
  max_players_direct: number;
  max_players_party: number;
  total_player_count: number;
  state?: unknown;
}

export interface ListLobbiesResponse {
  game_modes: { game_mode_id: string }[];
  regions: RegionInfo[];
  lobbies: LobbyInfo[];
}

export interface ListRegionsResponse {
  regions: RegionInfo[];
}

export interface PlayerStatistics {
  player_count: number;
  game_modes: Record<string, { player_count: number; regions: Record<string, { player_count: number }> }>;
}

export interface LobbyStatusStopped {
  stop_ts: string;
  failed: boolean;
  exit_code: number;
}

export interface LobbyStatus {
  running?: Record<string, never> | null;
  stopped?: LobbyStatusStopped | null;
}

export interface LobbySummary {
  lobby_id: string;
  namespace_id: string;
  lobby_group_name_id: string;
  region_id: string;
  create_ts: string;
  start_ts?: string | null;
  ready_ts?: string | null;
  status: LobbyStatus;
}

export interface JobMetrics {
  job: string;
  cpu: number[];
  memory: number[];
  allocated_memory?: number | null;
}

export interface LobbyLogsResponse {
  lobby: LobbySummary;
  metrics?: JobMetrics | null;
  stdout_presigned_urls?: string[];
  stderr_presigned_urls?: string[];
  perf_lists?: unknown[];
}

/** CloudGamesLogStream: which of a lobby's output streams. */
export type LogStream = 'std_out' | 'std_err';

/** cloud.games.matchmaker.getLobbyLogs (CloudGamesGetLobbyLogsResponse): lines base64, timestamps RFC 3339, oldest first. */
export interface LobbyLogLinesResponse {
  lines: string[];
  timestamps: string[];
  watch: { index: string };
}

/** cloud.games.matchmaker.exportLobbyLogs: a presigned GET of the whole stream. */
export interface ExportLobbyLogsResponse {
  url: string;
}

export interface CreateNamespaceTokenPublicResponse {
  token: string;
}

/** One of the game's regions (CloudRegionSummary): the lobby logs' region UUID, with its names. */
export interface CloudRegionSummary {
  region_id: string;
  region_name_id: string;
  region_display_name: string;
  provider?: string;
  provider_display_name?: string;
  universal_region?: string;
}

/** cloud_games_getGameById; only what the CLI reads of CloudGameFull. */
export interface GetGameResponse {
  game: {
    game_id: string;
    display_name?: string;
    available_regions: CloudRegionSummary[];
    /** CloudNamespaceSummary: login asks for one by its name id. */
    namespaces?: NamespaceSummary[];
    /** CloudVersionSummary, oldest first. */
    versions?: VersionSummary[];
  };
}

/** cloud.NamespaceSummary: a namespace of the game and the version deployed to it. */
export interface NamespaceSummary {
  namespace_id: string;
  name_id: string;
  display_name?: string;
  version_id?: string;
  create_ts?: string;
}

/** cloud.version.Summary */
export interface VersionSummary {
  version_id: string;
  display_name: string;
  create_ts?: string;
}

/** cloud.games.namespaces.getGameNamespaceById */
export interface NamespaceResponse {
  namespace: NamespaceSummary & { config?: { matchmaker?: Record<string, unknown> } };
}

/** cloud.games.namespaces.GetGameNamespaceVersionHistoryList */
export interface NamespaceHistoryResponse {
  versions: { namespace_id: string; version_id: string; deploy_ts: string }[];
}

/** cloud.games.versions.getGameVersionById */
export interface VersionResponse {
  version: VersionSummary & { config: Record<string, unknown> };
}

/** The answer of a validate route: every error as its path (none: valid). */
export interface ValidationResponse {
  errors: { path: string[] }[];
}

/** cloud.auth.inspect: who the cloud token is; a game's cloud token names its game. */
export interface InspectResponse {
  agent: { game_cloud?: { game_id: string } };
}

export interface ExportHistoryResponse {
  url: string;
}

export type BuildKind = 'docker_image' | 'oci_bundle';
export type BuildCompression = 'none' | 'lz4';
export const BUILD_KINDS: readonly BuildKind[] = ['docker_image', 'oci_bundle'];
export const BUILD_COMPRESSIONS: readonly BuildCompression[] = ['none', 'lz4'];

export interface CreateBuildRequest {
  display_name: string;
  image_tag: string;
  image_file: { path: string; content_type?: string; content_length: number };
  multipart_upload?: boolean;
  kind?: BuildKind;
  compression?: BuildCompression;
}

export interface PresignedRequest {
  path: string;
  url: string;
  byte_offset: number;
  content_length: number;
}

export interface CreateBuildResponse {
  build_id: string;
  upload_id: string;
  image_presigned_request?: PresignedRequest | null;
  image_presigned_requests?: PresignedRequest[] | null;
}

// The emulator's own admin API (`/_emulator/...`): not part of the service, served only by `gamehost emulator`.

/** cloud.games.builds.listGameBuilds: CloudBuildSummary. The image tag is not a field of it; the emulator puts it in `tags.image_tag`. */
export interface BuildSummary {
  build_id: string;
  upload_id: string;
  display_name: string;
  create_ts: string;
  content_length: number;
  complete: boolean;
  tags: Record<string, string>;
}

export interface ListBuildsResponse {
  builds: BuildSummary[];
}

/** cloud.games.matchmaker.deleteMatchmakerLobby */
export interface DeleteLobbyResponse {
  did_remove?: boolean;
}

/** cloud.games.namespaces.logs.listNamespaceLobbies: CloudLogsLobbySummary, as in LobbyLogsResponse.lobby. */
export interface NamespaceLobbiesResponse {
  lobbies: { lobby_id: string; create_ts?: string }[];
}

export interface EmulatorBuild {
  build_id: string;
  image_tag: string;
  display_name: string;
  kind: string;
  compression: string;
  content_length: number;
  sha256: string | null;
  complete: boolean;
  create_ts: string;
}

export interface EmulatorBuildsResponse {
  builds: EmulatorBuild[];
}

export interface EmulatorStopLobbyRequest {
  exit_code?: number;
  /** Default: failed when the exit code is not 0. */
  failed?: boolean;
}

export interface EmulatorCreateGameRequest {
  name?: string;
  game_modes?: string[];
  /** Region ids. */
  regions?: string[];
  ttl_seconds?: number;
}

export interface EmulatorGame {
  game_id: string;
  namespace_id: string;
  name: string;
  game_modes: string[];
  regions: { id: string; name: string }[];
  /** The one game every emulator has; it never expires and cannot be deleted. */
  seeded: boolean;
  create_ts: string | null;
  expire_ts: string | null;
}

export interface EmulatorGamesResponse {
  games: EmulatorGame[];
}

export type EmulatorCreatedGame = EmulatorGame & { tokens: { cloud: string; public: string; dev: string } };

export interface EmulatorDeletedGame {
  game_id: string;
  deleted: { lobbies: number; players: number; builds: number; exports: number };
}

/** The lobby's summary, and whether it had stopped before this call (then it keeps that first stop). */
export type EmulatorStopLobbyResponse = LobbyLogsResponse & { already_stopped?: boolean };

/** GET /_emulator/lobbies/{lobby_id}/env: the variables a lobby's process is given, by name. */
export interface EmulatorLobbyEnv {
  lobby_id: string;
  env: Record<string, string>;
}
