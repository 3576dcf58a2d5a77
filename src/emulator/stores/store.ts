// What the services keep, and where: the Store (records of lobbies, players, builds and uploads) and the BlobStore
// (the bytes of parts, builds and exports, and the presigned URLs clients use to move them). Every method is
// asynchronous so a networked implementation (Postgres, an S3-compatible bucket) fits behind the same interface.
import type { Readable } from 'node:stream';

export interface LobbyRow {
  lobby_id: string;
  namespace_id: string;
  game_mode: string;
  /** Region name id, e.g. lnd-atl. */
  region_id: string;
  region_name: string;
  /** Find counts its players against this (max_players_normal: the game mode's, or the find's or create's own). */
  max_players: number;
  /** Join counts against this: the game mode's max_players_direct, or the find's or create's own max_players. */
  max_players_direct: number;
  /** The game mode's max_players_party (no call of the emulator counts against it: there are no parties). */
  max_players_party: number;
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
  /** JSON object: label -> {"port"} or {"min", "max"} (a range), fixed at create so every reader agrees. */
  ports: string;
  /** 1 when find made it, 0 for a create's custom lobby (either stops when its last player leaves, as production's). */
  auto_created: number;
  /** 1 while its server has closed it to find. */
  is_closed: number;
  /** The JSON its server set, or null. */
  state: string | null;
  /** A lobby waiting for its server's ready call (ready_ts NOT_READY) is stopped at this time; null otherwise. */
  ready_deadline_ts: number | null;
  /** Players holding a place: pending (not yet removed) and connected; kept by the store with each change. */
  player_count: number;
  /**
   * The replica that runs the lobby's server (readiness `run`: its replica id, see runtime/replica.ts), and that
   * emulator process (its pid and start time, ms since the epoch); null when no emulator runs one.
   */
  owner: string | null;
  owner_pid: number | null;
  owner_start: number | null;
  /** The server's process (its group leader) and its start time, once started; null for a container or none. */
  server_pid: number | null;
  server_start: number | null;
  /** The version the lobby was made with (its namespace's then): it runs that version's game mode to its stop. */
  version_id: string;
  /**
   * The idle lobbies its version keeps of its game mode in its region (idle_lobbies.max): an emptied lobby stays up
   * (idle) while its key holds no more than this many, else stops; 0 once its version is no longer the namespace's.
   */
  idle_max: number;
  /** Since when the lobby has held no player (made empty by the idle update, or emptied); null while it holds one. */
  idle_ts: number | null;
}

/** What idle lobbies are kept per: a namespace's version, one of its game modes, one region. */
export interface IdleKey {
  namespace_id: string;
  version_id: string;
  game_mode: string;
  region_id: string;
}

export type IdleInsert = 'inserted' | 'enough' | 'too_many_lobbies';

/** ready_ts of a lobby whose server has not called ready yet: the latest time a Date holds, never reached. */
export const NOT_READY = 8_640_000_000_000_000;

/** A player a find, join or create makes. */
export interface NewPlayer {
  player_id: string;
  /** The client's address, for the limit of unconnected players from one source. */
  source_ip: string;
  /**
   * A pending player must connect within this long of the later of now and its lobby's ready (the lobby's ready
   * call restarts it); ignored when connected.
   */
  registration_ms: number;
  /** Already connected (the admin route's player, standing for a client its server admitted). */
  connected: boolean;
}

export interface PlayerRow {
  player_id: string;
  lobby_id: string;
  create_ts: number;
  register_by_ts: number | null;
  connect_ts: number | null;
  remove_ts: number | null;
}

/** What find searches: lobbies of the namespace in these game modes and regions, holding every tag. */
export interface FindQuery {
  namespace_id: string;
  /** The namespace's current version: a lobby of another version gets no find traffic. */
  version_id: string;
  game_modes: string[];
  region_ids: string[];
  tags: Record<string, string>;
  now: number;
  /** MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE at this many players from the source not yet removed; null: no limit. */
  source_limit: number | null;
  /** MATCHMAKER_TOO_MANY_LOBBIES instead of creating when the namespace runs this many lobbies (or more). */
  max_lobbies: number;
  /**
   * A lobby whose server an emulator runs (owner set) is a candidate only while that replica's records are current:
   * it said so (touchReplica) at this time or later. One that did not (its store was out of its reach, it died) may
   * hold lobbies whose servers are gone.
   */
  served_since: number;
}

export type FindOutcome =
  | { kind: 'joined'; lobby: LobbyRow; created: boolean }
  | { kind: 'none' }
  | { kind: 'too_many_lobbies' }
  | { kind: 'too_many_from_source' };

export type ConnectOutcome = 'connected' | 'different_lobby' | 'already_connected' | 'expired' | 'removed';

/**
 * Where a page of the history ends: the next holds the lobbies created before create_ts, and those created at it
 * whose id's bytes come after lobby_id (the page's last lobby, or `''` for all created at that time).
 */
export interface HistoryCursor {
  create_ts: number;
  lobby_id: string;
}

/** A running lobby as list shows it: with its connected players. */
export interface ListedLobby extends LobbyRow {
  connected: number;
}

/** The columns a new lobby is inserted with: one list for every engine. */
export const LOBBY_INSERT_COLUMNS =
  'lobby_id, namespace_id, game_mode, region_id, region_name, max_players, publicity, tags, lobby_config, create_ts, ' +
  'start_ts, ready_ts, idle_lifetime_ms, idle_stop_ts, ports, auto_created, ready_deadline_ts, player_count, ' +
  'owner, owner_pid, owner_start, server_pid, server_start, version_id, idle_max, idle_ts, max_players_direct, max_players_party';

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
  | { kind: 'too_many_from_source' }
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
/** A version of a game's configuration: the config as it was created (the API's JSON text). */
export interface VersionRow {
  version_id: string;
  game_id: string;
  display_name: string;
  config: string;
  create_ts: number;
}

/**
 * A namespace of a game as written: one the game's cloud token created, or one of the two every game starts with
 * once something of it changed (its version, its matchmaker config).
 */
export interface NamespaceRow {
  namespace_id: string;
  game_id: string;
  name_id: string;
  display_name: string;
  version_id: string;
  create_ts: number;
  lobby_count_max: number;
  /** What `mm-config` set every per-client bound to; null: production's defaults (8, and 4, 2, 2, 2). */
  max_players_per_client: number | null;
}

/** One deploy of a version to a namespace. */
export interface NamespaceVersionRow {
  namespace_id: string;
  version_id: string;
  deploy_ts: number;
}

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

/**
 * What of a namespace's row a new lobby is made from (its version and bounds), as one string; '' for a namespace
 * with no row (the two every game starts with, before anything of them changed).
 */
export function namespaceStamp(row: Pick<NamespaceRow, 'version_id' | 'lobby_count_max' | 'max_players_per_client'> | undefined): string {
  return row === undefined ? '' : `${row.version_id}|${row.lobby_count_max}|${row.max_players_per_client ?? ''}`;
}

/** insertLobby's answer when the namespace's row is no longer the one its lobby was made from: nothing was written. */
export class NamespaceChanged extends Error {
  constructor(namespaceId: string) {
    super(`namespace ${namespaceId} changed since its lobby was made`);
  }
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

/**
 * How much of a stream is kept: past either bound the oldest lines are dropped first. `bytes` counts the lines' own
 * bytes and `rowBytes` for each stored row (a row holds a run of lines: LogChunk), which is what the engine keeps
 * beside them, so the bound is close to what the stream takes on disk.
 */
export interface LogBounds {
  lines: number;
  bytes: number;
  rowBytes?: number;
}

/** A line longer than this is cut into pieces of this size as it is read (Docker's own log driver splits at 16 KiB). */
export const MAX_LOG_LINE_BYTES = 16 * 1024;
/**
 * 3.5 MiB of lines (a row counted 160 bytes beside them: its columns, header and index entry on either engine) leave
 * room within LOG_DISK_BYTES for what the engine keeps beside the bytes (PostgreSQL's TOAST: about 3%) and for lines
 * dropped but not yet reclaimed (a replica's appends in flight and those waiting for its vacuum: 1 MiB a lobby with
 * four servers flooding at once, measured by bench/log-flood.js).
 */
export const LOG_BOUNDS: LogBounds = Object.freeze({ lines: 10_000, bytes: 3.5 * 1024 * 1024, rowBytes: 160 });
/** What a stream takes on disk at most, in either engine (the per-stream bound docs/emulator.md gives). */
export const LOG_DISK_BYTES = 5 * 1024 * 1024;

/**
 * The timestamps of lines appended at `now` (milliseconds) after a stream's last line at `lastTs` (microseconds):
 * the clock in microseconds, but always past the one before, so a watch index never skips a line. The lines of one
 * append so have consecutive stamps after the first, which is what lets a stored row (LogChunk) keep one stamp.
 */
export function nextLogTs(lastTs: number, now: number, firstTs = 0): number {
  return Math.max(lastTs + 1, now * 1000, firstTs);
}

/**
 * Lines stored as one row: `count` lines of consecutive stamps, the last `ts`; their bytes one after the other in
 * `bytes`, and their lengths in `lengths` (uint32 LE each; null for a row of one line).
 */
export interface LogChunk {
  ts: number;
  count: number;
  bytes: Buffer;
  lengths: Buffer | null;
}

/** The most lines and bytes of one row: big enough that a flood's rows fill the engine's pages, small to rewrite. */
const CHUNK_LINES = 1024;
const CHUNK_BYTES = 64 * 1024;

/** Lines with consecutive stamps (the last `lastTs`) as rows of at most CHUNK_LINES and CHUNK_BYTES (one line at least). */
export function toChunks(lines: Buffer[], lastTs: number): LogChunk[] {
  const chunks: LogChunk[] = [];
  for (let i = 0; i < lines.length; ) {
    let end = i + 1;
    let size = lines[i]!.length;
    while (end < lines.length && end - i < CHUNK_LINES && size + lines[end]!.length <= CHUNK_BYTES) size += lines[end++]!.length;
    const run = lines.slice(i, end);
    let lengths: Buffer | null = null;
    if (run.length > 1) {
      lengths = Buffer.allocUnsafe(4 * run.length);
      run.forEach((line, j) => lengths!.writeUInt32LE(line.length, 4 * j));
    }
    chunks.push({ ts: lastTs - (lines.length - end), count: run.length, bytes: run.length === 1 ? run[0]! : Buffer.concat(run, size), lengths });
    i = end;
  }
  return chunks;
}

/** The lines of a stored row, oldest first, each with its stamp. */
export function fromChunk(chunk: LogChunk): LogLine[] {
  if (chunk.lengths === null) return [{ ts: chunk.ts, line: chunk.bytes }];
  const lines: LogLine[] = [];
  for (let j = 0, off = 0; j < chunk.count; j++) {
    const len = chunk.lengths.readUInt32LE(4 * j);
    lines.push({ ts: chunk.ts - (chunk.count - 1 - j), line: chunk.bytes.subarray(off, off + len) });
    off += len;
  }
  return lines;
}

/** What is kept of a stream: its newest stamp, and how many lines and bytes it holds (rows counted: LogBounds). */
export interface LogStreamState {
  last_ts: number;
  line_count: number;
  byte_count: number;
}

const within = (bounds: LogBounds, lines: number, bytes: number) => lines <= bounds.lines && bytes <= bounds.bytes;

/**
 * Drops a stream's oldest rows from `state` (one page of them, oldest first: the stamp of each one's last line,
 * its lines and their bytes) until it is within `bounds`. Answers the stamp of the last row to delete (null: none);
 * the row that only some of its first lines may need to leave (`split`: the caller reads it, then splitChunk); and
 * whether the next page is needed too.
 */
export function trimLogs(
  state: LogStreamState,
  bounds: LogBounds,
  page: { ts: number; lines: number; n: number }[],
): { cutoff: number | null; split: number | null; more: boolean } {
  let cutoff: number | null = null;
  for (const row of page) {
    if (within(bounds, state.line_count, state.byte_count)) return { cutoff, split: null, more: false };
    // Kept with its last line alone (of whatever length), the row might do: which lines go is the split's to say.
    if (row.lines > 1 && within(bounds, state.line_count - row.lines + 1, state.byte_count - row.n)) return { cutoff, split: row.ts, more: false };
    state.line_count -= row.lines;
    state.byte_count -= row.n + (bounds.rowBytes ?? 0);
    cutoff = row.ts;
  }
  return { cutoff, split: null, more: !within(bounds, state.line_count, state.byte_count) && page.length === TRIM_PAGE };
}

/**
 * How many of a row's first lines leave so `state` is within `bounds` (all of them: the row goes, its rowBytes too),
 * taken off `state`.
 */
export function splitChunk(state: LogStreamState, bounds: LogBounds, chunk: LogChunk): number {
  const lines = fromChunk(chunk);
  let k = 0;
  while (k < lines.length && !within(bounds, state.line_count, state.byte_count)) {
    state.line_count--;
    state.byte_count -= lines[k++]!.line.length;
  }
  if (k === lines.length) state.byte_count -= bounds.rowBytes ?? 0;
  return k;
}

/** The page size trimLogs is fed with. */
export const TRIM_PAGE = 512;

/**
 * The records: SQLite in one data directory (sqlite.ts), shared by every process that opens it, or PostgreSQL
 * (postgres.ts), shared by every replica on one database.
 */
export interface Store {
  insertGame(game: GameRow): Promise<void>;
  /** A new version; false (nothing written) when the game has a version of that display name already. */
  insertVersion(version: VersionRow): Promise<boolean>;
  getVersion(versionId: string): Promise<VersionRow | undefined>;
  /** The game's versions, oldest first, without their configs (getVersion reads one whole). */
  listVersions(gameId: string): Promise<Omit<VersionRow, 'config'>[]>;
  /** Whether the game has a created version of that display name. */
  versionNamed(gameId: string, displayName: string): Promise<boolean>;
  /** A new namespace; false (nothing written) when the game has one of that name id, or one of that id. */
  insertNamespace(namespace: NamespaceRow): Promise<boolean>;
  /** Writes a namespace's row whole (one of the two every game starts with is written on its first change). */
  putNamespace(namespace: NamespaceRow): Promise<void>;
  getNamespace(namespaceId: string): Promise<NamespaceRow | undefined>;
  /** The game's written namespaces. */
  listNamespaces(gameId: string): Promise<NamespaceRow[]>;
  /**
   * Sets a namespace's version (its row written whole, as putNamespace) and appends the deploy to its history, in one
   * transaction; false (nothing written) when the namespace already runs that version.
   */
  deployVersion(namespace: NamespaceRow, deployTs: number): Promise<boolean>;
  /** A namespace's deploys, newest first. */
  namespaceHistory(namespaceId: string, limit: number): Promise<NamespaceVersionRow[]>;
  /** Reserves the game's next version name of `day` (YYYY.MM.DD): its number, 1 for the day's first. */
  reserveVersionName(gameId: string, day: string): Promise<number>;
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
  purgeGame(gameId: string, namespaceIds: string[], keepGame?: boolean): Promise<PurgedGame>;
  /**
   * Inserts a lobby (its player_count counting the player) and its creating player in one transaction; with
   * `maxLobbies`, only while the namespace runs fewer lobbies than that (false: nothing written). With `seen` (the
   * namespaceStamp of the namespace's row the lobby was made from), only while the row is still that: else nothing
   * is written and NamespaceChanged is thrown.
   */
  insertLobby(lobby: LobbyRow, player: NewPlayer, maxLobbies?: number, seen?: string): Promise<boolean>;
  /**
   * The idle update's new lobby (no player), serialised with the namespace's finds: inserted only while its key holds
   * fewer than `min` idle lobbies ('enough' otherwise) and the namespace runs fewer than `maxLobbies`.
   */
  insertIdleLobby(lobby: LobbyRow, min: number, maxLobbies: number, now: number): Promise<IdleInsert>;
  /** The players from `sourceIp` in the namespace's running lobbies not yet removed (pending or connected). */
  playersFromSource(namespaceId: string, sourceIp: string, now: number): Promise<number>;
  /** The running lobbies of the key that hold no player. */
  idleCount(key: IdleKey, now: number): Promise<number>;
  /**
   * Stops the longest-idle lobbies of the key beyond `max`, serialised with the namespace's finds; answers their ids.
   */
  trimIdle(key: IdleKey, max: number, now: number): Promise<string[]>;
  /**
   * Adds a player unless the lobby is unknown, stopped or at max_players_direct, or the source holds `sourceLimit`
   * unconnected players already (null: no limit), in one transaction.
   */
  joinLobby(lobbyId: string, player: NewPlayer, now: number, sourceLimit: number | null): Promise<JoinOutcome>;
  /**
   * Find, in one transaction serialised with every other find and join of the namespace: the fullest running,
   * open lobby of the query with room for one more gets the player; with none, `create` (when given) is inserted
   * with the player, unless the namespace runs max_lobbies.
   */
  findLobby(query: FindQuery, player: NewPlayer, create: LobbyRow | null): Promise<FindOutcome>;
  /**
   * What time alone decides, for every reader alike, before reading lobby state: idle lobbies stop at their idle
   * deadline, lobbies never made ready at their ready deadline; pending players past their registration time are
   * removed, and a lobby that leaves empty stops, unless its version keeps idle lobbies (LobbyRow.idle_max): then it
   * stays up, idle, and the longest-idle of its key beyond that many stop.
   */
  expireIdle(now: number): Promise<void>;
  /**
   * Marks a running lobby ready now (when it was not yet), restarts its pending players' registration time at
   * now + registrationMs and its idle lifetime; answers the lobby as it is after, undefined when unknown.
   */
  readyLobby(lobbyId: string, now: number, registrationMs: number): Promise<LobbyRow | undefined>;
  setLobbyClosed(lobbyId: string, closed: boolean): Promise<void>;
  /** The lobby's state JSON; null clears it. */
  setLobbyState(lobbyId: string, state: string | null): Promise<void>;
  getPlayer(playerId: string): Promise<PlayerRow | undefined>;
  /** A pending player of this lobby becomes connected, once; the outcome says why not otherwise. */
  connectPlayer(playerId: string, lobbyId: string, now: number): Promise<ConnectOutcome>;
  /**
   * Removes a player of this lobby (a removed or unknown one is no error); when that leaves it empty, it stops or
   * stays up idle as expireIdle says. 'different_lobby' when the player is another lobby's.
   */
  disconnectPlayer(playerId: string, lobbyId: string, now: number): Promise<'removed' | 'different_lobby'>;
  /** The public running lobbies of a namespace, oldest first, with their connected players. */
  listLobbies(namespaceId: string): Promise<ListedLobby[]>;
  getLobby(lobbyId: string): Promise<LobbyRow | undefined>;
  /**
   * The lobby after expireIdle(now): what a waiting find polls. One query answers it and says whether anything is due;
   * only then are expiries written and the lobby read again.
   */
  currentLobby(lobbyId: string, now: number): Promise<LobbyRow | undefined>;
  /** Records the process a lobby's server runs as (its owner started it): what a restarted owner kills if it is left. */
  setLobbyServer(lobbyId: string, pid: number, start: number): Promise<void>;
  /**
   * The ready window of a lobby whose server has not called ready: null holds it (its build's image is loading, which
   * is no part of the window), a time restarts it (its server started). A ready or stopped lobby is left as it is.
   */
  setReadyDeadline(lobbyId: string, deadline: number | null): Promise<void>;
  /** The running lobbies whose servers the replica `owner` runs (or ran, before it restarted), oldest first. */
  ownedLobbies(owner: string): Promise<LobbyRow[]>;
  /**
   * A replica that runs servers says its records are current at `now`: every exit of its servers so far is written.
   * Find hands out its lobbies only while it says so (FindQuery.served_since).
   */
  touchReplica(replica: string, now: number): Promise<void>;
  /** When the replica last said its records were current (touchReplica); undefined when it never did. */
  replicaSeen(replica: string): Promise<number | undefined>;
  /**
   * Keeps the resource samples of a lobby's server (JSON, the last few: its owner replaces them at each sample), so
   * that every replica answers the lobby's metrics with them; purged with the lobby's game.
   */
  setLobbySamples(lobbyId: string, samples: string): Promise<void>;
  /** The samples setLobbySamples kept for a lobby; undefined when none were. */
  lobbySamples(lobbyId: string): Promise<string | undefined>;
  /**
   * Stops, now, the running lobbies of a namespace that hold no player and were made with a version other than
   * `versionId` (what a deploy does to its outdated idle lobbies), and makes the occupied ones stop once they empty
   * (their idle_max 0); answers the ids of those stopped.
   */
  stopIdleOutdated(namespaceId: string, versionId: string, now: number): Promise<string[]>;
  /** False when the lobby was already stopped (or does not exist). */
  stopLobby(lobbyId: string, stopTs: number, exitCode: number, failed: boolean): Promise<boolean>;
  /**
   * The connected players of the running lobbies of a namespace (from their connected call until removed; a pending
   * player holds a place but is not counted), by game mode and region; rows of zero left out.
   */
  playerCounts(namespaceId: string): Promise<PlayerCountRow[]>;
  /**
   * The namespace's lobbies alive at some time in (queryStart, queryEnd] (stopped in it, created in it, or running and
   * created before its end), newest first (create_ts, then lobby_id's bytes), at most `limit`: those after `after`
   * in that order (default: from the window's end), so a long history is read a page at a time.
   */
  lobbyHistory(namespaceId: string, queryStart: number, queryEnd: number, limit: number, after?: HistoryCursor): Promise<LobbyRow[]>;
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
  /** One build, whatever its game (the caller checks it), for what names a build: a version, a lobby's run. */
  getBuild(buildId: string): Promise<BuildRow | undefined>;
  /** The game's build of that tag (complete or not): a game's tags are unique. */
  buildTagged(gameId: string, tag: string): Promise<BuildRow | undefined>;
  /** The game's newest complete build. */
  newestCompleteBuild(gameId: string): Promise<BuildRow | undefined>;
  /**
   * Appends lines to a lobby's stream at `now`, in one transaction: each is cut to MAX_LOG_LINE_BYTES and stamped
   * (nextLogTs), then the oldest lines are dropped while the stream is over `bounds`. With `firstTs` (microseconds,
   * past every stamp of the stream's earlier batches: the runner's), the first line is stamped at least that, and a
   * stream already stamped at or past it took this batch before: a retry after an answer that was lost, skipped.
   */
  appendLobbyLogs(lobbyId: string, stream: LogStream, lines: Buffer[], now: number, bounds?: LogBounds, firstTs?: number): Promise<void>;
  /**
   * A stream's lines, oldest first: with `after` (microseconds), the first `limit` lines stamped later than it;
   * without, the `limit` most recent.
   */
  lobbyLogs(lobbyId: string, stream: LogStream, limit: number, after?: number): Promise<LogLine[]>;
  /**
   * Removes the output and samples of lobbies stopped before `before` (the logs' retention), at most `limit` lobbies
   * a call; answers how many lobbies it removed them of.
   */
  purgeStoppedLogs(before: number, limit: number): Promise<number>;
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
  /** What identified the part's file when `sha256` was taken of its bytes (local-blobs.ts); null before version 23. */
  stamp: string | null;
}

/**
 * The local blob store's records (local-blobs.ts): what each part PUT received, and the export CSVs. Kept by the
 * Store beside the rest (SQLite or PostgreSQL), so every process on the store sees them; a bucket keeps these itself.
 */
export interface LocalObjectIndex {
  recordPart(uploadId: string, partNumber: number, size: number, sha256: string, stamp: string, now: number): Promise<void>;
  listParts(uploadId: string): Promise<PartRow[]>;
  /** Keeps an export (one of the same id is replaced: a lobby stream has one export file at a time). */
  insertExport(exportId: string, gameId: string, csv: string, now: number, expiresTs: number): Promise<void>;
  getExport(exportId: string): Promise<{ csv: string; expires_ts: number } | undefined>;
}

/** What arrived for one part: its size and what identifies its bytes (their SHA-256 here, S3's ETag on a bucket). */
export interface ReceivedPart {
  size: number;
  etag: string;
  /** A local part's file as it was when `etag` was taken (PartRow's), when it is still where it arrived. */
  stamp?: string | null;
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
  /** Keeps an export's text; one already kept under the id is replaced. */
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
  /**
   * A complete build's bytes, as pushed (a lobby's server run from it: `--run-build`); throws when they are gone or
   * are not as many as its record says (a part removed or cut by hand, an object replaced), so no short read
   * reaches the runner as a malformed build.
   */
  readBuild(build: Pick<BuildRow, 'build_id' | 'content_length'>): Promise<Readable>;
  /** Resolves when the store answers (the health route); throws saying what failed otherwise. */
  ping(): Promise<void>;
}
