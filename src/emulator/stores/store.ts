// What the services keep, and where: the Store (records of lobbies, players, builds and uploads) and the BlobStore
// (the bytes of parts, builds and exports, and the presigned URLs clients use to move them). Every method is
// asynchronous so a networked implementation (Postgres, an S3-compatible bucket) fits behind the same interface.

export interface LobbyRow {
  lobby_id: string;
  namespace_id: string;
  game_mode: string;
  /** Region name id, e.g. lnd-atl. */
  region_id: string;
  region_name: string;
  max_players: number;
  publicity: 'public' | 'private';
  /** JSON object of tags. */
  tags: string;
  /** JSON, or null when none was given. */
  lobby_config: string | null;
  create_ts: number;
  /** Stored at create time from that process's config, so every reader agrees. */
  start_ts: number;
  ready_ts: number;
  stop_ts: number | null;
  exit_code: number | null;
  failed: number | null;
  /** From the creating process's config; null when lobbies never stop by themselves. */
  idle_lifetime_ms: number | null;
  /** When the lobby stops unless a player joins first: the later of ready and the last join, plus the lifetime. */
  idle_stop_ts: number | null;
}

/** The columns a new lobby is inserted with, in the order of lobbyInsertValues: one list for every engine. */
export const LOBBY_INSERT_COLUMNS =
  'lobby_id, namespace_id, game_mode, region_id, region_name, max_players, publicity, tags, lobby_config, create_ts, ' +
  'start_ts, ready_ts, idle_lifetime_ms, idle_stop_ts';

export type LobbyInsertValues = [
  string, string, string, string, string, number, string, string, string | null, number, number, number,
  number | null, number | null,
];

/** A new lobby's values, in the order of LOBBY_INSERT_COLUMNS. */
export function lobbyInsertValues(l: LobbyRow): LobbyInsertValues {
  return [
    l.lobby_id, l.namespace_id, l.game_mode, l.region_id, l.region_name, l.max_players, l.publicity, l.tags,
    l.lobby_config, l.create_ts, l.start_ts, l.ready_ts, l.idle_lifetime_ms, l.idle_stop_ts,
  ];
}

export interface BuildRow {
  build_id: string;
  game_id: string;
  upload_id: string;
  display_name: string;
  image_tag: string;
  kind: string;
  compression: string;
  path: string;
  content_type: string | null;
  content_length: number;
  sha256: string | null;
  complete: number;
  create_ts: number;
  complete_ts: number | null;
}

export type UploadState = 'pending' | 'assembling' | 'complete';

export interface UploadRow {
  upload_id: string;
  build_id: string;
  game_id: string;
  content_length: number;
  part_size: number;
  part_count: number;
  state: UploadState;
  claim_ts: number | null;
}

export type NewUpload = Omit<UploadRow, 'state' | 'claim_ts' | 'game_id'>;

export type JoinOutcome =
  | { kind: 'joined'; lobby: LobbyRow; players: number }
  | { kind: 'full'; lobby: LobbyRow; players: number }
  | { kind: 'stopped'; lobby: LobbyRow }
  | { kind: 'not_found' };

export interface PlayerCountRow {
  game_mode: string;
  region_id: string;
  player_count: number;
}

/**
 * A game made for one CI job (`POST /_emulator/games`), with its one namespace. The seeded game is not a row: it
 * lives as long as the store, with the process's configured game modes and regions.
 */
export interface GameRow {
  game_id: string;
  namespace_id: string;
  /** A label for people (`--name`); may be empty. */
  name: string;
  /** JSON array of game mode names. */
  game_modes: string;
  /** JSON array of {"id", "name"}. */
  regions: string;
  create_ts: number;
  expire_ts: number;
  /** When its deletion began (a delete, or the expiry sweep): from then on it is gone to every replica. */
  delete_ts: number | null;
}

/** What a game holds outside the records, for the blob store to delete: build and upload bytes, exports. */
export interface GameObjects {
  game_id: string;
  builds: { build_id: string; upload_id: string }[];
  export_ids: string[];
}

/** A build as the blob store knows it: its bytes under the build id, an open upload under the upload id. */
export interface BuildObject {
  game_id: string;
  build_id: string;
  upload_id: string;
}

/** How many records a game's purge removed. */
export interface PurgedGame {
  lobbies: number;
  players: number;
  builds: number;
  exports: number;
}

/** A lobby's output streams, as the logs routes name them. */
export type LogStream = 'std_out' | 'std_err';
export const LOG_STREAMS: readonly LogStream[] = ['std_out', 'std_err'];

/** One line of a lobby's output, without its line ending. */
export interface LogLine {
  /** Microseconds since the epoch; unique and increasing within a stream (the watch index is built from it). */
  ts: number;
  line: Buffer;
}

/** How much of a stream is kept: past either bound the oldest lines are dropped first. */
export interface LogBounds {
  lines: number;
  bytes: number;
}

/** A line longer than this is cut into pieces of this size as it is read (Docker's own log driver splits at 16 KiB). */
export const MAX_LOG_LINE_BYTES = 16 * 1024;
export const LOG_BOUNDS: LogBounds = Object.freeze({ lines: 10_000, bytes: 5 * 1024 * 1024 });

/**
 * The timestamps of lines appended at `now` (milliseconds) after a stream's last line at `lastTs` (microseconds):
 * the clock in microseconds, but always past the one before, so a watch index never skips a line.
 */
export function nextLogTs(lastTs: number, now: number): number {
  return Math.max(lastTs + 1, now * 1000);
}

/** What is kept of a stream: its newest stamp, and how many lines and bytes it holds. */
export interface LogStreamState {
  last_ts: number;
  line_count: number;
  byte_count: number;
}

/**
 * Drops a stream's oldest lines from `state` (one page of them: ts and byte length, oldest first) until it is within
 * `bounds`. Answers the stamp of the last line to delete (null: none), and whether the next page is needed too.
 */
export function trimLogs(
  state: LogStreamState,
  bounds: LogBounds,
  page: { ts: number; n: number }[],
): { cutoff: number | null; more: boolean } {
  const within = () => state.line_count <= bounds.lines && state.byte_count <= bounds.bytes;
  let cutoff: number | null = null;
  for (const row of page) {
    if (within()) return { cutoff, more: false };
    state.line_count--;
    state.byte_count -= row.n;
    cutoff = row.ts;
  }
  return { cutoff, more: !within() && page.length === TRIM_PAGE };
}

/** The page size trimLogs is fed with. */
export const TRIM_PAGE = 512;

/**
 * The records: SQLite in one data directory (sqlite.ts), shared by every process that opens it, or PostgreSQL
 * (postgres.ts), shared by every replica on one database.
 */
export interface Store {
  insertGame(game: GameRow): Promise<void>;
  /**
   * A game by id, whether or not its deletion began (undefined once purged). Called on every request that carries
   * a created game's token, so it must be cheap and current across processes and replicas: both stores read the row by key.
   */
  getGame(gameId: string): Promise<GameRow | undefined>;
  /** The games whose deletion has not begun, oldest first. */
  listGames(): Promise<GameRow[]>;
  /** Begins a game's deletion; false when it is unknown or its deletion already began (someone else's to finish). */
  claimGameDeletion(gameId: string, now: number): Promise<boolean>;
  /**
   * Begins the deletion of every game expired by `now` (`expired`), and takes up again the deletions begun before
   * `now - staleMs` (`stale`: their first purge long done, or cut short by a process that died); answers their
   * ids. One conditional UPDATE each, so each game is claimed by one caller.
   */
  claimExpiredGames(now: number, staleMs: number): Promise<{ expired: string[]; stale: string[] }>;
  /** The builds, uploads and exports of a game, for the blob store to delete their bytes. */
  gameObjects(gameId: string): Promise<GameObjects>;
  /**
   * Deletes a game's records (lobbies, players, builds, uploads, parts, exports, and the game's row unless
   * `keepGame`), in one transaction.
   */
  purgeGame(gameId: string, namespaceId: string, keepGame?: boolean): Promise<PurgedGame>;
  /** Inserts a lobby and its creating player in one transaction. */
  insertLobby(lobby: LobbyRow, playerId: string): Promise<void>;
  /** Adds a player unless the lobby is unknown, stopped or at max_players, in one transaction. */
  joinLobby(lobbyId: string, playerId: string, now: number): Promise<JoinOutcome>;
  /** Stops every lobby whose idle deadline has passed; called before reading lobby state. */
  expireIdle(now: number): Promise<void>;
  getLobby(lobbyId: string): Promise<LobbyRow | undefined>;
  /** False when the lobby was already stopped (or does not exist). */
  stopLobby(lobbyId: string, stopTs: number, exitCode: number, failed: boolean): Promise<boolean>;
  /** Players of the running lobbies of a namespace, by game mode and region. */
  playerCounts(namespaceId: string): Promise<PlayerCountRow[]>;
  /** Lobbies stopped in the window, created in it, or running and created before its end; newest first. */
  lobbyHistory(namespaceId: string, queryStart: number, queryEnd: number): Promise<LobbyRow[]>;
  /** Inserts a build and its upload; false (and nothing written) when the game already uses the image tag. */
  insertBuild(build: BuildRow, upload: NewUpload): Promise<boolean>;
  getUpload(uploadId: string): Promise<UploadRow | undefined>;
  /** Takes the right to assemble an upload; a claim older than staleMs (a crashed process) can be taken over. */
  claimUpload(uploadId: string, now: number, staleMs: number): Promise<boolean>;
  /** Keeps a long assembly's claim fresh so nobody takes it over as stale. */
  touchClaim(uploadId: string, now: number): Promise<void>;
  releaseUpload(uploadId: string): Promise<void>;
  /** Marks the upload and its build complete, in one transaction. */
  completeUpload(upload: UploadRow, sha256: string, size: number, now: number): Promise<void>;
  /** The builds of a game, newest first. */
  listBuilds(gameId: string): Promise<BuildRow[]>;
  /**
   * Appends lines to a lobby's stream at `now`, in one transaction: each is cut to MAX_LOG_LINE_BYTES and stamped
   * (nextLogTs), then the oldest lines are dropped while the stream is over `bounds`.
   */
  appendLobbyLogs(lobbyId: string, stream: LogStream, lines: Buffer[], now: number, bounds?: LogBounds): Promise<void>;
  /**
   * A stream's lines, oldest first: with `after` (microseconds), the first `limit` lines stamped later than it;
   * without, the `limit` most recent.
   */
  lobbyLogs(lobbyId: string, stream: LogStream, limit: number, after?: number): Promise<LogLine[]>;
  /**
   * Deletes a build, its upload and its parts' records, in one transaction; answers what the blob store is to
   * delete, or undefined for a build it does not hold (or that another caller deleted first).
   */
  deleteBuild(buildId: string): Promise<BuildObject | undefined>;
  /** Builds whose upload never completed and was opened before `before` (its part URLs have expired). */
  staleUploads(before: number): Promise<BuildObject[]>;
  /** Resolves when the store answers a trivial query; rejects with why it does not. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

/** What an export holds: the lobby history (the default), or the whole of a lobby's log stream. */
export type ExportFile = 'export.csv' | 'stdout.txt' | 'stderr.txt';

/** A part as the local blob store recorded it. */
export interface PartRow {
  part_number: number;
  size: number;
  sha256: string;
}

/**
 * The local blob store's records (local-blobs.ts): what each part PUT received, and the export CSVs. Kept by the
 * Store beside the rest (SQLite or PostgreSQL), so every process on the store sees them; a bucket keeps these itself.
 */
export interface LocalObjectIndex {
  recordPart(uploadId: string, partNumber: number, size: number, sha256: string, now: number): Promise<void>;
  listParts(uploadId: string): Promise<PartRow[]>;
  insertExport(exportId: string, gameId: string, csv: string, now: number, expiresTs: number): Promise<void>;
  getExport(exportId: string): Promise<{ csv: string; expires_ts: number } | undefined>;
}

/** What arrived for one part: its size and what identifies its bytes (their SHA-256 here, S3's ETag on a bucket). */
export interface ReceivedPart {
  size: number;
  etag: string;
}

/**
 * The bytes: files in the data directory (local-blobs.ts), moved through presigned URLs on the emulator's own
 * origin, or an S3-compatible bucket (s3-blobs.ts) whose own presigned URLs clients use. The three methods marked
 * "presigned target" serve the emulator's /_upload and /_export routes; a bucket never sends clients there.
 */
export interface BlobStore {
  /**
   * Opens an upload before its build is recorded and answers where a client PUTs each part (1-based, in order),
   * valid until expiresTs; origin is how the request reached us.
   */
  openUpload(origin: string, upload: NewUpload, now: number, expiresTs: number): Promise<string[]>;
  /** Drops an opened upload that will never complete (its build was refused) and what arrived for it. */
  abortUpload(upload: NewUpload): Promise<void>;
  /** Where a client GETs an export of a game (its file: the history CSV or a lobby's log), valid until expiresTs. */
  exportUrl(origin: string, exportId: string, gameId: string, now: number, expiresTs: number, file?: ExportFile): Promise<string>;
  /** Presigned target: throws PRESIGN_INVALID or PRESIGN_EXPIRED unless the URL was signed by this store. */
  checkPresigned(method: string, path: string, query: URLSearchParams, now: number): Promise<void>;
  /**
   * Presigned target: stores the body as the part (the last of concurrent writes wins) and returns what arrived,
   * or throws UPLOAD_INVALID when the body ends before `length` bytes.
   */
  writePart(uploadId: string, part: number, length: number, body: AsyncIterable<Buffer>, now: number): Promise<ReceivedPart>;
  /** Presigned target: removes a part written for an upload that is gone (and the upload's place once empty). */
  discardPart(uploadId: string, part: number): Promise<void>;
  /** The parts that arrived, by part number; size is what the store holds now. */
  receivedParts(upload: NewUpload): Promise<Map<number, ReceivedPart>>;
  /**
   * Joins parts 1..partCount into the build's blob, in order, throwing UPLOAD_INVALID (naming the part) when a
   * part's bytes differ from those received; then removes the parts. Returns the SHA-256 of the whole.
   * `progress` is called now and then so a long assembly can keep its claim fresh.
   */
  assemble(upload: UploadRow, parts: Map<number, ReceivedPart>, progress: () => Promise<void>): Promise<string>;
  putExport(exportId: string, gameId: string, text: string, now: number, expiresTs: number, file?: ExportFile): Promise<void>;
  /**
   * Deletes the bytes of a game's builds, open uploads (a bucket aborts their multipart uploads) and exports;
   * what is already gone is no error, so a purge taken over from a dead process can run it again. Answers how many
   * exports it deleted itself (a bucket's objects; the local store's exports are records, counted by purgeGame).
   */
  deleteGameObjects(objects: GameObjects): Promise<number>;
  /**
   * Removes what assemblies whose process died left behind (temp files last written before `writtenBefore`, a wall
   * clock time); answers how many. A bucket leaves none (an unfinished multipart upload is the upload itself).
   */
  removeLeftovers(writtenBefore: number): Promise<number>;
  /** Presigned target: the export's CSV, or undefined when it is unknown or pruned. */
  readExport(exportId: string): Promise<string | undefined>;
  /** Resolves when the store answers (the health route); throws saying what failed otherwise. */
  ping(): Promise<void>;
}
