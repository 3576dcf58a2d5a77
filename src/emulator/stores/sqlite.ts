// The Store in SQLite, shared by every emulator process over one data directory; it also keeps the local blob
// store's index (what each part PUT received, and the export CSVs).
import { DEFAULT_CONFIG } from '../config.js';
import { sleepSync } from '../datadir.js';
import { migrateSqlite } from './migrations.js';
import { openDatabase, type SqliteDatabase, type SqliteStatement, type SqliteTransaction } from './sqlite-driver.js';
import type {
  BuildRow,
  BuildObject,
  ConnectOutcome,
  FindOutcome,
  FindQuery,
  GameObjects,
  GameRow,
  JoinOutcome,
  LobbyRow,
  ListedLobby,
  LocalObjectIndex,
  NewPlayer,
  NewUpload,
  PartRow,
  PlayerRow,
  PlayerCountRow,
  PurgedGame,
  Store,
  UploadRow,
  LobbyInsertValues,
  LogBounds,
  LogLine,
  LogStream,
  LogStreamState,
} from './store.js';
import { LOBBY_INSERT_COLUMNS, LOG_BOUNDS, MAX_LOG_LINE_BYTES, NOT_READY, TRIM_PAGE, lobbyInsertValues, nextLogTs, trimLogs } from './store.js';

// Game rows kept between requests, at most (a token names one game; a CI fleet uses a few hundred at once).
const GAME_CACHE_MAX = 4096;
const BUSY_RETRY_MS = 15_000;

function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' && (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED'));
}

/** Retries start-up steps that lose a lock race with other processes beyond busy_timeout's reach (WAL switch). */
function retryBusy<T>(step: () => T): T {
  const deadline = Date.now() + BUSY_RETRY_MS;
  for (;;) {
    try {
      return step();
    } catch (err) {
      if (!isBusy(err) || Date.now() > deadline) throw err;
      sleepSync(5 + Math.floor(Math.random() * 20));
    }
  }
}

function isUniqueViolation(err: unknown): boolean {
  return (err as { code?: unknown }).code === 'SQLITE_CONSTRAINT_UNIQUE';
}

function prepareStatements(db: SqliteDatabase) {
  return {
    insertLobby: db.prepare<LobbyInsertValues>(
      `INSERT INTO lobbies (${LOBBY_INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    readyDue: db.prepare<[number]>(
      `UPDATE lobbies SET stop_ts = ready_deadline_ts, exit_code = 0, failed = 1
        WHERE stop_ts IS NULL AND ready_deadline_ts IS NOT NULL AND ready_deadline_ts <= ?`,
    ),
    anyReadyDue: db.prepare<[number], number>(
      'SELECT 1 FROM lobbies WHERE stop_ts IS NULL AND ready_deadline_ts IS NOT NULL AND ready_deadline_ts <= ? LIMIT 1',
    ).pluck(),
    expiredPlayers: db.prepare<[number], { player_id: string; lobby_id: string; register_by_ts: number }>(
      `SELECT player_id, lobby_id, register_by_ts FROM players
        WHERE connect_ts IS NULL AND remove_ts IS NULL AND register_by_ts <= ?`,
    ),
    anyPlayerDue: db.prepare<[number], number>(
      'SELECT 1 FROM players WHERE connect_ts IS NULL AND remove_ts IS NULL AND register_by_ts <= ? LIMIT 1',
    ).pluck(),
    removePlayer: db.prepare<[number, string]>('UPDATE players SET remove_ts = ? WHERE player_id = ? AND remove_ts IS NULL'),
    leaveLobby: db.prepare<[string]>('UPDATE lobbies SET player_count = player_count - 1 WHERE lobby_id = ?'),
    stopIfEmpty: db.prepare<[number, string]>(
      `UPDATE lobbies SET stop_ts = ?, exit_code = 0, failed = 0
        WHERE lobby_id = ? AND stop_ts IS NULL AND player_count <= 0`,
    ),
    enterLobby: db.prepare<[string]>('UPDATE lobbies SET player_count = player_count + 1 WHERE lobby_id = ?'),
    runningLobbies: db.prepare<[string], number>(
      'SELECT COUNT(*) FROM lobbies INDEXED BY lobbies_running WHERE namespace_id = ? AND stop_ts IS NULL',
    ).pluck(),
    pendingFromSource: db.prepare<[string, string], number>(
      `SELECT COUNT(*) FROM players p INDEXED BY players_pending_source JOIN lobbies l ON l.lobby_id = p.lobby_id
        WHERE p.source_ip = ? AND p.connect_ts IS NULL AND p.remove_ts IS NULL AND l.namespace_id = ? AND l.stop_ts IS NULL`,
    ).pluck(),
    markReady: db.prepare<{ now: number; id: string }>(
      `UPDATE lobbies SET start_ts = MIN(start_ts, @now), ready_ts = @now, ready_deadline_ts = NULL,
         idle_stop_ts = CASE WHEN idle_lifetime_ms IS NULL THEN NULL ELSE @now + idle_lifetime_ms END
        WHERE lobby_id = @id AND stop_ts IS NULL AND ready_ts > @now`,
    ),
    restartRegistration: db.prepare<[number, string]>(
      'UPDATE players SET register_by_ts = ? WHERE lobby_id = ? AND connect_ts IS NULL AND remove_ts IS NULL',
    ),
    setClosed: db.prepare<[number, string]>('UPDATE lobbies SET is_closed = ? WHERE lobby_id = ?'),
    setState: db.prepare<[string | null, string]>('UPDATE lobbies SET state = ? WHERE lobby_id = ?'),
    getPlayer: db.prepare<[string], PlayerRow>(
      'SELECT player_id, lobby_id, create_ts, register_by_ts, connect_ts, remove_ts FROM players WHERE player_id = ?',
    ),
    connectPlayer: db.prepare<[number, string]>('UPDATE players SET connect_ts = ? WHERE player_id = ?'),
    listLobbies: db.prepare<[string], ListedLobby>(
      `SELECT l.*, (SELECT COUNT(*) FROM players p WHERE p.lobby_id = l.lobby_id AND p.connect_ts IS NOT NULL
           AND p.remove_ts IS NULL) AS connected
         FROM lobbies l INDEXED BY lobbies_running
        WHERE l.namespace_id = ? AND l.stop_ts IS NULL AND l.publicity = 'public'
        ORDER BY l.create_ts, l.lobby_id`,
    ),
    // An idle lobby stops at its idle deadline, not when someone happens to look, so every reader agrees.
    expireIdle: db.prepare<[number]>(
      `UPDATE lobbies SET stop_ts = idle_stop_ts, exit_code = 0, failed = 0
        WHERE stop_ts IS NULL AND idle_stop_ts IS NOT NULL AND idle_stop_ts <= ?`,
    ),
    anyIdleDue: db.prepare<[number], number>(
      `SELECT 1 FROM lobbies WHERE stop_ts IS NULL AND idle_stop_ts IS NOT NULL AND idle_stop_ts <= ? LIMIT 1`,
    ).pluck(),
    touchIdle: db.prepare<[number, string]>(
      'UPDATE lobbies SET idle_stop_ts = ? WHERE lobby_id = ? AND idle_lifetime_ms IS NOT NULL',
    ),
    insertPlayer: db.prepare<[string, string, number, string, number | null, number | null]>(
      'INSERT INTO players (player_id, lobby_id, create_ts, source_ip, register_by_ts, connect_ts) VALUES (?, ?, ?, ?, ?, ?)',
    ),
    getLobby: db.prepare<[string], LobbyRow>('SELECT * FROM lobbies WHERE lobby_id = ?'),
    setLobbyServer: db.prepare<[number, number, string]>('UPDATE lobbies SET server_pid = ?, server_start = ? WHERE lobby_id = ?'),
    setReadyDeadline: db.prepare<[number | null, string, number]>('UPDATE lobbies SET ready_deadline_ts = ? WHERE lobby_id = ? AND stop_ts IS NULL AND ready_ts = ?'),
    ownedLobbies: db.prepare<[string], LobbyRow>(
      'SELECT * FROM lobbies INDEXED BY lobbies_owner WHERE owner = ? AND stop_ts IS NULL AND owner IS NOT NULL ORDER BY create_ts, lobby_id',
    ),
    touchReplica: db.prepare<[string, number]>(
      'INSERT INTO replicas (replica, seen_ts) VALUES (?, ?) ON CONFLICT (replica) DO UPDATE SET seen_ts = max(seen_ts, excluded.seen_ts)',
    ),
    replicaSeen: db.prepare<[string], number>('SELECT seen_ts FROM replicas WHERE replica = ?').pluck(),
    stoppedWithLogs: db.prepare<[number, number], string>(
      `SELECT x.lobby_id FROM (SELECT lobby_id FROM lobby_log_streams UNION SELECT lobby_id FROM lobby_samples) x
         JOIN lobbies l ON l.lobby_id = x.lobby_id WHERE l.stop_ts IS NOT NULL AND l.stop_ts < ? LIMIT ?`,
    ).pluck(),
    dropLobbyLogs: db.prepare<[string]>('DELETE FROM lobby_logs WHERE lobby_id = ?'),
    dropLobbyLogStreams: db.prepare<[string]>('DELETE FROM lobby_log_streams WHERE lobby_id = ?'),
    dropLobbySamples: db.prepare<[string]>('DELETE FROM lobby_samples WHERE lobby_id = ?'),
    stopLobby: db.prepare<[number, number, number, string]>(
      'UPDATE lobbies SET stop_ts = ?, exit_code = ?, failed = ? WHERE lobby_id = ? AND stop_ts IS NULL',
    ),
    // A few rows kept by triggers, however many lobbies run.
    playerCounts: db.prepare<[string], PlayerCountRow>(
      'SELECT game_mode, region_id, player_count FROM running_players WHERE namespace_id = ? AND player_count > 0',
    ),
    // The production export query: stopped in the window, created in it, or running and created before its end.
    history: db.prepare<{ ns: string; qs: number; qe: number }, LobbyRow>(
      `SELECT * FROM lobbies
        WHERE namespace_id = @ns AND (
          (stop_ts > @qs AND stop_ts <= @qe) OR
          (create_ts > @qs AND create_ts <= @qe) OR
          (stop_ts IS NULL AND create_ts <= @qe))
        ORDER BY create_ts DESC, lobby_id`,
    ),
    insertBuild: db.prepare<
      [string, string, string, string, string, string, string, string, string | null, number, number]
    >(
      `INSERT INTO builds (build_id, game_id, upload_id, display_name, image_tag, kind, compression, path,
         content_type, content_length, create_ts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    insertUpload: db.prepare<[string, string, number, number, number]>(
      'INSERT INTO uploads (upload_id, build_id, content_length, part_size, part_count) VALUES (?, ?, ?, ?, ?)',
    ),
    getUpload: db.prepare<[string], UploadRow>(
      `SELECT u.upload_id, u.build_id, b.game_id, u.content_length, u.part_size, u.part_count, u.state, u.claim_ts
         FROM uploads u JOIN builds b ON b.build_id = u.build_id WHERE u.upload_id = ?`,
    ),
    upsertPart: db.prepare<[string, number, number, string, number]>(
      `INSERT INTO upload_parts (upload_id, part_number, size, sha256, update_ts) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (upload_id, part_number) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256,
         update_ts = excluded.update_ts`,
    ),
    listParts: db.prepare<[string], PartRow>(
      'SELECT part_number, size, sha256 FROM upload_parts WHERE upload_id = ? ORDER BY part_number',
    ),
    claimUpload: db.prepare<[number, string, number]>(
      `UPDATE uploads SET state = 'assembling', claim_ts = ?
        WHERE upload_id = ? AND (state = 'pending' OR (state = 'assembling' AND claim_ts < ?))`,
    ),
    touchClaim: db.prepare<[number, string]>(
      "UPDATE uploads SET claim_ts = ? WHERE upload_id = ? AND state = 'assembling'",
    ),
    releaseUpload: db.prepare<[string]>(
      "UPDATE uploads SET state = 'pending', claim_ts = NULL WHERE upload_id = ? AND state = 'assembling'",
    ),
    completeUpload: db.prepare<[string]>("UPDATE uploads SET state = 'complete' WHERE upload_id = ?"),
    completeBuild: db.prepare<[string, number, number, string]>(
      'UPDATE builds SET sha256 = ?, content_length = ?, complete = 1, complete_ts = ? WHERE build_id = ?',
    ),
    listBuilds: db.prepare<[string], BuildRow>('SELECT * FROM builds WHERE game_id = ? ORDER BY create_ts DESC, build_id'),
    insertExport: db.prepare<[string, string, string, number, number]>(
      `INSERT INTO exports (export_id, game_id, csv, create_ts, expires_ts) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (export_id) DO UPDATE SET csv = excluded.csv, create_ts = excluded.create_ts, expires_ts = excluded.expires_ts`,
    ),
    pruneExports: db.prepare<[number]>('DELETE FROM exports WHERE expires_ts < ?'),
    getExport: db.prepare<[string], { csv: string; expires_ts: number }>(
      'SELECT csv, expires_ts FROM exports WHERE export_id = ?',
    ),
    insertGame: db.prepare<[string, string, string, string, string, number, number]>(
      `INSERT INTO games (game_id, namespace_id, name, game_modes, regions, create_ts, expire_ts)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ),
    getGame: db.prepare<[string], GameRow>('SELECT * FROM games WHERE game_id = ?'),
    dataVersion: db.prepare<[], number>('PRAGMA data_version').pluck(),
    listGames: db.prepare<[], GameRow>('SELECT * FROM games WHERE delete_ts IS NULL ORDER BY create_ts, game_id'),
    claimGameDeletion: db.prepare<[number, string]>('UPDATE games SET delete_ts = ? WHERE game_id = ? AND delete_ts IS NULL'),
    claimExpiredGames: db.prepare<[number, number], string>(
      'UPDATE games SET delete_ts = ? WHERE delete_ts IS NULL AND expire_ts <= ? RETURNING game_id',
    ).pluck(),
    claimStaleDeletions: db.prepare<[number, number], string>(
      'UPDATE games SET delete_ts = ? WHERE delete_ts IS NOT NULL AND delete_ts < ? RETURNING game_id',
    ).pluck(),
    gameBuilds: db.prepare<[string], { build_id: string; upload_id: string }>(
      'SELECT build_id, upload_id FROM builds WHERE game_id = ?',
    ),
    gameExports: db.prepare<[string], string>('SELECT export_id FROM exports WHERE game_id = ?').pluck(),
    purgePlayers: db.prepare<[string]>(
      'DELETE FROM players WHERE lobby_id IN (SELECT lobby_id FROM lobbies WHERE namespace_id = ?)',
    ),
    purgeLobbies: db.prepare<[string]>('DELETE FROM lobbies WHERE namespace_id = ?'),
    purgeParts: db.prepare<[string]>(
      'DELETE FROM upload_parts WHERE upload_id IN (SELECT upload_id FROM builds WHERE game_id = ?)',
    ),
    purgeUploads: db.prepare<[string]>('DELETE FROM uploads WHERE build_id IN (SELECT build_id FROM builds WHERE game_id = ?)'),
    purgeBuilds: db.prepare<[string]>('DELETE FROM builds WHERE game_id = ?'),
    purgeExports: db.prepare<[string]>('DELETE FROM exports WHERE game_id = ?'),
    buildObject: db.prepare<[string], BuildObject>('SELECT game_id, build_id, upload_id FROM builds WHERE build_id = ?'),
    deleteBuildParts: db.prepare<[string]>('DELETE FROM upload_parts WHERE upload_id = ?'),
    deleteBuildUpload: db.prepare<[string]>('DELETE FROM uploads WHERE build_id = ?'),
    deleteBuild: db.prepare<[string]>('DELETE FROM builds WHERE build_id = ?'),
    staleUploads: db.prepare<[number], BuildObject>('SELECT game_id, build_id, upload_id FROM builds WHERE complete = 0 AND create_ts < ?'),
    purgeGame: db.prepare<[string]>('DELETE FROM games WHERE game_id = ?'),
    getLogStream: db.prepare<[string, string], LogStreamState>(
      'SELECT last_ts, line_count, byte_count FROM lobby_log_streams WHERE lobby_id = ? AND stream = ?',
    ),
    putLogStream: db.prepare<[string, string, number, number, number]>(
      `INSERT INTO lobby_log_streams (lobby_id, stream, last_ts, line_count, byte_count) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (lobby_id, stream) DO UPDATE SET last_ts = excluded.last_ts, line_count = excluded.line_count,
         byte_count = excluded.byte_count`,
    ),
    insertLog: db.prepare<[string, string, number, Buffer]>('INSERT INTO lobby_logs (lobby_id, stream, ts, line) VALUES (?, ?, ?, ?)'),
    oldestLogs: db.prepare<[string, string, number, number], { ts: number; n: number }>(
      'SELECT ts, length(line) AS n FROM lobby_logs WHERE lobby_id = ? AND stream = ? AND ts > ? ORDER BY ts LIMIT ?',
    ),
    dropLogs: db.prepare<[string, string, number]>('DELETE FROM lobby_logs WHERE lobby_id = ? AND stream = ? AND ts <= ?'),
    recentLogs: db.prepare<[string, string, number], { ts: number; line: Uint8Array }>(
      `SELECT ts, line FROM (SELECT ts, line FROM lobby_logs WHERE lobby_id = ? AND stream = ? ORDER BY ts DESC LIMIT ?)
        ORDER BY ts`,
    ),
    logsAfter: db.prepare<[string, string, number, number], { ts: number; line: Uint8Array }>(
      'SELECT ts, line FROM lobby_logs WHERE lobby_id = ? AND stream = ? AND ts > ? ORDER BY ts LIMIT ?',
    ),
    purgeLogs: db.prepare<[string]>(
      'DELETE FROM lobby_logs WHERE lobby_id IN (SELECT lobby_id FROM lobbies WHERE namespace_id = ?)',
    ),
    purgeLogStreams: db.prepare<[string]>(
      'DELETE FROM lobby_log_streams WHERE lobby_id IN (SELECT lobby_id FROM lobbies WHERE namespace_id = ?)',
    ),
    purgeSamples: db.prepare<[string]>('DELETE FROM lobby_samples WHERE lobby_id IN (SELECT lobby_id FROM lobbies WHERE namespace_id = ?)'),
    setLobbySamples: db.prepare<[string, string]>(
      'INSERT INTO lobby_samples (lobby_id, samples) VALUES (?, ?) ON CONFLICT (lobby_id) DO UPDATE SET samples = excluded.samples',
    ),
    lobbySamples: db.prepare<[string], string>('SELECT samples FROM lobby_samples WHERE lobby_id = ?').pluck(),
    // Reads the file, so a deleted or unreadable database fails here.
    ping: db.prepare('SELECT COUNT(*) FROM meta'),
  };
}

// SQLite's drivers are synchronous; the async methods keep the Store interface open to networked databases.
export class SqliteStore implements Store, LocalObjectIndex {
  private readonly db: SqliteDatabase;
  private readonly stmt: ReturnType<typeof prepareStatements>;
  private readonly insertLobbyTx: SqliteTransaction<(lobby: LobbyRow, player: NewPlayer) => void>;
  private readonly joinLobbyTx: SqliteTransaction<
    (lobbyId: string, player: NewPlayer, now: number, sourceLimit: number | null) => JoinOutcome
  >;
  private readonly findLobbyTx: SqliteTransaction<(query: FindQuery, player: NewPlayer, create: LobbyRow | null) => FindOutcome>;
  private readonly expireTx: SqliteTransaction<(now: number) => void>;
  private readonly readyTx: SqliteTransaction<(lobbyId: string, now: number, registrationMs: number) => LobbyRow | undefined>;
  private readonly connectTx: SqliteTransaction<(playerId: string, lobbyId: string, now: number) => ConnectOutcome>;
  private readonly disconnectTx: SqliteTransaction<
    (playerId: string, lobbyId: string, now: number) => 'removed' | 'different_lobby'
  >;
  /** Find's search, one statement per shape (how many game modes, regions and tags). */
  private readonly findStatements = new Map<string, SqliteStatement<unknown[], LobbyRow>>();
  private readonly insertBuildTx: SqliteTransaction<(build: BuildRow, upload: NewUpload) => void>;
  private readonly completeUploadTx: SqliteTransaction<
    (upload: UploadRow, sha256: string, size: number, now: number) => void
  >;
  private readonly purgeGameTx: SqliteTransaction<(gameId: string, namespaceId: string, keepGame: boolean) => PurgedGame>;
  /** Game rows as last read, while no other connection has written (PRAGMA data_version says so). */
  private readonly games = new Map<string, GameRow | undefined>();
  private gamesVersion: number | undefined;
  private readonly appendLogsTx: SqliteTransaction<
    (lobbyId: string, stream: LogStream, lines: Buffer[], now: number, bounds: LogBounds, firstTs?: number) => void
  >;
  private readonly purgeLogsTx: SqliteTransaction<(before: number, limit: number) => number>;
  private readonly insertExportTx: SqliteTransaction<
    (exportId: string, gameId: string, csv: string, now: number, expires: number) => void
  >;

  /** `timeoutMs`: how long a statement waits for another process's lock before it fails (SQLITE_BUSY). */
  static open(file: string, timeoutMs: number = DEFAULT_CONFIG.storeTimeoutMs): SqliteStore {
    const db = openDatabase(file, { timeout: timeoutMs });
    try {
      db.pragma(`busy_timeout = ${Math.floor(timeoutMs)}`);
      retryBusy(() => db.pragma('journal_mode = WAL'));
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      // Each step's writer takes the lock; the others wait on it and then find the step taken.
      retryBusy(() => migrateSqlite(db, file));
      return new SqliteStore(db);
    } catch (err) {
      db.close();
      throw err;
    }
  }

  private constructor(db: SqliteDatabase) {
    this.db = db;
    this.stmt = prepareStatements(db);
    const s = this.stmt;
    const addPlayer = (lobby: LobbyRow, player: NewPlayer, now: number) => {
      const registerBy = player.connected ? null : Math.max(now, lobby.ready_ts) + player.registration_ms;
      s.insertPlayer.run(player.player_id, lobby.lobby_id, now, player.source_ip, registerBy, player.connected ? now : null);
    };
    this.insertLobbyTx = db.transaction((lobby: LobbyRow, player: NewPlayer) => {
      s.insertLobby.run(...lobbyInsertValues({ ...lobby, player_count: 1 }));
      addPlayer(lobby, player, lobby.create_ts);
    });
    // Every step below runs inside a write transaction, so expiries and the counts they change land together.
    const expire = (now: number) => {
      s.expireIdle.run(now);
      s.readyDue.run(now);
      for (const p of s.expiredPlayers.all(now)) {
        s.removePlayer.run(p.register_by_ts, p.player_id);
        s.leaveLobby.run(p.lobby_id);
        s.stopIfEmpty.run(p.register_by_ts, p.lobby_id);
      }
    };
    this.expireTx = db.transaction(expire);
    const tooManyFromSource = (namespaceId: string, player: NewPlayer, limit: number | null) =>
      limit !== null && !player.connected && s.pendingFromSource.get(player.source_ip, namespaceId)! >= limit;
    this.joinLobbyTx = db.transaction((lobbyId: string, player: NewPlayer, now: number, sourceLimit: number | null): JoinOutcome => {
      expire(now);
      const lobby = s.getLobby.get(lobbyId);
      if (lobby === undefined) return { kind: 'not_found' };
      if (lobby.stop_ts !== null) return { kind: 'stopped', lobby };
      const players = lobby.player_count;
      if (players >= lobby.max_players) return { kind: 'full', lobby, players };
      if (tooManyFromSource(lobby.namespace_id, player, sourceLimit)) return { kind: 'too_many_from_source' };
      addPlayer(lobby, player, now);
      s.enterLobby.run(lobbyId);
      if (lobby.idle_lifetime_ms !== null) s.touchIdle.run(Math.max(lobby.ready_ts, now) + lobby.idle_lifetime_ms, lobbyId);
      return { kind: 'joined', lobby: { ...lobby, player_count: players + 1 }, players: players + 1 };
    });
    this.findLobbyTx = db.transaction((query: FindQuery, player: NewPlayer, create: LobbyRow | null): FindOutcome => {
      const { now } = query;
      expire(now);
      if (tooManyFromSource(query.namespace_id, player, query.source_limit)) return { kind: 'too_many_from_source' };
      const tags = Object.entries(query.tags);
      const found = this.findStatement(query.game_modes.length, query.region_ids.length, tags.length).get(
        query.namespace_id,
        ...query.game_modes,
        ...query.region_ids,
        ...tags.flat(),
        query.served_since,
      );
      if (found !== undefined) {
        addPlayer(found, player, now);
        s.enterLobby.run(found.lobby_id);
        if (found.idle_lifetime_ms !== null) s.touchIdle.run(Math.max(found.ready_ts, now) + found.idle_lifetime_ms, found.lobby_id);
        return { kind: 'joined', lobby: { ...found, player_count: found.player_count + 1 }, created: false };
      }
      if (create === null) return { kind: 'none' };
      if (s.runningLobbies.get(query.namespace_id)! >= query.max_lobbies) return { kind: 'too_many_lobbies' };
      const lobby = { ...create, player_count: 1 };
      s.insertLobby.run(...lobbyInsertValues(lobby));
      addPlayer(lobby, player, now);
      return { kind: 'joined', lobby, created: true };
    });
    this.readyTx = db.transaction((lobbyId: string, now: number, registrationMs: number) => {
      expire(now);
      if (s.markReady.run({ now, id: lobbyId }).changes === 1) s.restartRegistration.run(now + registrationMs, lobbyId);
      return s.getLobby.get(lobbyId);
    });
    this.connectTx = db.transaction((playerId: string, lobbyId: string, now: number): ConnectOutcome => {
      expire(now);
      const player = s.getPlayer.get(playerId);
      if (player === undefined) return 'removed';
      if (player.lobby_id !== lobbyId) return 'different_lobby';
      if (player.connect_ts !== null) return 'already_connected';
      if (player.register_by_ts !== null && player.register_by_ts <= now) return 'expired';
      if (player.remove_ts !== null || s.getLobby.get(lobbyId)?.stop_ts !== null) return 'removed';
      s.connectPlayer.run(now, playerId);
      return 'connected';
    });
    this.disconnectTx = db.transaction((playerId: string, lobbyId: string, now: number): 'removed' | 'different_lobby' => {
      expire(now);
      const player = s.getPlayer.get(playerId);
      if (player === undefined) return 'removed';
      if (player.lobby_id !== lobbyId) return 'different_lobby';
      if (s.removePlayer.run(now, playerId).changes === 1) {
        s.leaveLobby.run(lobbyId);
        s.stopIfEmpty.run(now, lobbyId);
      }
      return 'removed';
    });
    this.insertBuildTx = db.transaction((build: BuildRow, upload: NewUpload) => {
      s.insertBuild.run(
        build.build_id,
        build.game_id,
        build.upload_id,
        build.display_name,
        build.image_tag,
        build.kind,
        build.compression,
        build.path,
        build.content_type,
        build.content_length,
        build.create_ts,
      );
      s.insertUpload.run(upload.upload_id, upload.build_id, upload.content_length, upload.part_size, upload.part_count);
    });
    this.completeUploadTx = db.transaction((upload: UploadRow, sha256: string, size: number, now: number) => {
      s.completeBuild.run(sha256, size, now, upload.build_id);
      s.completeUpload.run(upload.upload_id);
    });
    this.purgeGameTx = db.transaction((gameId: string, namespaceId: string, keepGame: boolean): PurgedGame => {
      s.purgeLogs.run(namespaceId);
      s.purgeLogStreams.run(namespaceId);
      s.purgeSamples.run(namespaceId);
      const players = s.purgePlayers.run(namespaceId).changes;
      const lobbies = s.purgeLobbies.run(namespaceId).changes;
      s.purgeParts.run(gameId);
      s.purgeUploads.run(gameId);
      const builds = s.purgeBuilds.run(gameId).changes;
      const exports = s.purgeExports.run(gameId).changes;
      if (!keepGame) s.purgeGame.run(gameId);
      return { lobbies, players, builds, exports };
    });
    this.appendLogsTx = db.transaction((lobbyId: string, stream: LogStream, lines: Buffer[], now: number, bounds: LogBounds, firstTs?: number) => {
      const state = s.getLogStream.get(lobbyId, stream) ?? { last_ts: 0, line_count: 0, byte_count: 0 };
      if (firstTs !== undefined && state.last_ts >= firstTs) return;
      for (const raw of lines) {
        const line = raw.length > MAX_LOG_LINE_BYTES ? raw.subarray(0, MAX_LOG_LINE_BYTES) : raw;
        state.last_ts = nextLogTs(state.last_ts, now, firstTs);
        s.insertLog.run(lobbyId, stream, state.last_ts, line);
        state.line_count++;
        state.byte_count += line.length;
      }
      let cutoff: number | null = null;
      for (let more = true; more; ) {
        const step = trimLogs(state, bounds, s.oldestLogs.all(lobbyId, stream, cutoff ?? -1, TRIM_PAGE));
        cutoff = step.cutoff ?? cutoff;
        more = step.more;
      }
      if (cutoff !== null) s.dropLogs.run(lobbyId, stream, cutoff);
      s.putLogStream.run(lobbyId, stream, state.last_ts, state.line_count, state.byte_count);
    });
    this.purgeLogsTx = db.transaction((before: number, limit: number) => {
      const ids = s.stoppedWithLogs.all(before, limit);
      for (const id of ids) {
        s.dropLobbyLogs.run(id);
        s.dropLobbyLogStreams.run(id);
        s.dropLobbySamples.run(id);
      }
      return ids.length;
    });
    this.insertExportTx = db.transaction((exportId: string, gameId: string, csv: string, now: number, expires: number) => {
      s.pruneExports.run(now);
      s.insertExport.run(exportId, gameId, csv, now, expires);
    });
  }

  /** The fullest running, open, public lobby with room that matches; SQL per shape, cached. */
  private findStatement(modes: number, regions: number, tags: number): SqliteStatement<unknown[], LobbyRow> {
    const key = `${modes}/${regions}/${tags}`;
    let statement = this.findStatements.get(key);
    if (statement === undefined) {
      const list = (n: number) => Array(n).fill('?').join(', ');
      // json_each compares any tag name, quotes and dots included, which a JSON path could not.
      const tagTests = Array(tags).fill(' AND EXISTS (SELECT 1 FROM json_each(tags) t WHERE t.key = ? AND t.value = ?)').join('');
      statement = this.db.prepare<unknown[], LobbyRow>(
        `SELECT * FROM lobbies INDEXED BY lobbies_find
          WHERE namespace_id = ? AND game_mode IN (${list(modes)}) AND region_id IN (${list(regions)})
            AND stop_ts IS NULL AND is_closed = 0 AND publicity = 'public' AND player_count < max_players${tagTests}
            AND (owner IS NULL OR EXISTS (SELECT 1 FROM replicas r WHERE r.replica = lobbies.owner AND r.seen_ts >= ?))
          ORDER BY player_count DESC, create_ts, lobby_id LIMIT 1`,
      );
      this.findStatements.set(key, statement);
    }
    return statement;
  }

  async insertLobby(lobby: LobbyRow, player: NewPlayer): Promise<void> {
    // BEGIN IMMEDIATE takes the write lock up front, which avoids upgrade deadlocks between processes.
    this.insertLobbyTx.immediate(lobby, player);
  }

  async joinLobby(lobbyId: string, player: NewPlayer, now: number, sourceLimit: number | null): Promise<JoinOutcome> {
    return this.joinLobbyTx.immediate(lobbyId, player, now, sourceLimit);
  }

  async findLobby(query: FindQuery, player: NewPlayer, create: LobbyRow | null): Promise<FindOutcome> {
    // The write lock serialises finds (and joins) across processes: no two fill the last place of a lobby.
    return this.findLobbyTx.immediate(query, player, create);
  }

  async expireIdle(now: number): Promise<void> {
    // Reading first keeps the common case (nothing due) off the write lock.
    const s = this.stmt;
    if (s.anyIdleDue.get(now) !== undefined || s.anyReadyDue.get(now) !== undefined || s.anyPlayerDue.get(now) !== undefined)
      this.expireTx.immediate(now);
  }

  async readyLobby(lobbyId: string, now: number, registrationMs: number): Promise<LobbyRow | undefined> {
    return this.readyTx.immediate(lobbyId, now, registrationMs);
  }

  async setLobbyClosed(lobbyId: string, closed: boolean): Promise<void> {
    this.stmt.setClosed.run(closed ? 1 : 0, lobbyId);
  }

  async setLobbyState(lobbyId: string, state: string | null): Promise<void> {
    this.stmt.setState.run(state, lobbyId);
  }

  async getPlayer(playerId: string): Promise<PlayerRow | undefined> {
    return this.stmt.getPlayer.get(playerId);
  }

  async connectPlayer(playerId: string, lobbyId: string, now: number): Promise<ConnectOutcome> {
    return this.connectTx.immediate(playerId, lobbyId, now);
  }

  async disconnectPlayer(playerId: string, lobbyId: string, now: number): Promise<'removed' | 'different_lobby'> {
    return this.disconnectTx.immediate(playerId, lobbyId, now);
  }

  async listLobbies(namespaceId: string): Promise<ListedLobby[]> {
    return this.stmt.listLobbies.all(namespaceId);
  }

  async getLobby(lobbyId: string): Promise<LobbyRow | undefined> {
    return this.stmt.getLobby.get(lobbyId);
  }

  async setLobbyServer(lobbyId: string, pid: number, start: number): Promise<void> {
    this.stmt.setLobbyServer.run(pid, start, lobbyId);
  }

  async setReadyDeadline(lobbyId: string, deadline: number | null): Promise<void> {
    this.stmt.setReadyDeadline.run(deadline, lobbyId, NOT_READY);
  }

  async ownedLobbies(owner: string): Promise<LobbyRow[]> {
    return this.stmt.ownedLobbies.all(owner);
  }

  async touchReplica(replica: string, now: number): Promise<void> {
    this.stmt.touchReplica.run(replica, now);
  }

  async replicaSeen(replica: string): Promise<number | undefined> {
    return this.stmt.replicaSeen.get(replica);
  }

  async purgeStoppedLogs(before: number, limit: number): Promise<number> {
    return this.purgeLogsTx.immediate(before, limit);
  }

  async setLobbySamples(lobbyId: string, samples: string): Promise<void> {
    this.stmt.setLobbySamples.run(lobbyId, samples);
  }

  async lobbySamples(lobbyId: string): Promise<string | undefined> {
    return this.stmt.lobbySamples.get(lobbyId);
  }

  async stopLobby(lobbyId: string, stopTs: number, exitCode: number, failed: boolean): Promise<boolean> {
    return this.stmt.stopLobby.run(stopTs, exitCode, failed ? 1 : 0, lobbyId).changes === 1;
  }

  async playerCounts(namespaceId: string): Promise<PlayerCountRow[]> {
    return this.stmt.playerCounts.all(namespaceId);
  }

  async lobbyHistory(namespaceId: string, queryStart: number, queryEnd: number): Promise<LobbyRow[]> {
    return this.stmt.history.all({ ns: namespaceId, qs: queryStart, qe: queryEnd });
  }

  async insertBuild(build: BuildRow, upload: NewUpload): Promise<boolean> {
    try {
      this.insertBuildTx.immediate(build, upload);
      return true;
    } catch (err) {
      if (isUniqueViolation(err)) return false;
      throw err;
    }
  }

  async getUpload(uploadId: string): Promise<UploadRow | undefined> {
    return this.stmt.getUpload.get(uploadId);
  }

  async claimUpload(uploadId: string, now: number, staleMs: number): Promise<boolean> {
    return this.stmt.claimUpload.run(now, uploadId, now - staleMs).changes === 1;
  }

  async touchClaim(uploadId: string, now: number): Promise<void> {
    this.stmt.touchClaim.run(now, uploadId);
  }

  async releaseUpload(uploadId: string): Promise<void> {
    this.stmt.releaseUpload.run(uploadId);
  }

  async completeUpload(upload: UploadRow, sha256: string, size: number, now: number): Promise<void> {
    this.completeUploadTx.immediate(upload, sha256, size, now);
  }

  async listBuilds(gameId: string): Promise<BuildRow[]> {
    return this.stmt.listBuilds.all(gameId);
  }

  async insertGame(game: GameRow): Promise<void> {
    const { game_id, namespace_id, name, game_modes, regions, create_ts, expire_ts } = game;
    this.stmt.insertGame.run(game_id, namespace_id, name, game_modes, regions, create_ts, expire_ts);
    this.games.clear();
  }

  async getGame(gameId: string): Promise<GameRow | undefined> {
    // data_version changes when another connection (process) commits; this connection's own game writes clear the
    // cache themselves. So the answer is always current, and a busy game costs no row read or new object.
    const version = this.stmt.dataVersion.get()!;
    if (version !== this.gamesVersion) {
      this.games.clear();
      this.gamesVersion = version;
    }
    if (this.games.has(gameId)) return this.games.get(gameId);
    const row = this.stmt.getGame.get(gameId);
    if (this.games.size >= GAME_CACHE_MAX) this.games.clear();
    this.games.set(gameId, row);
    return row;
  }

  async listGames(): Promise<GameRow[]> {
    return this.stmt.listGames.all();
  }

  async claimGameDeletion(gameId: string, now: number): Promise<boolean> {
    this.games.clear();
    return this.stmt.claimGameDeletion.run(now, gameId).changes === 1;
  }

  async claimExpiredGames(now: number, staleMs: number): Promise<{ expired: string[]; stale: string[] }> {
    this.games.clear();
    return { expired: this.stmt.claimExpiredGames.all(now, now), stale: this.stmt.claimStaleDeletions.all(now, now - staleMs) };
  }

  async deleteBuild(buildId: string): Promise<BuildObject | undefined> {
    const s = this.stmt;
    return this.db.transaction((): BuildObject | undefined => {
      const row = s.buildObject.get(buildId);
      if (row === undefined) return undefined;
      s.deleteBuildParts.run(row.upload_id);
      s.deleteBuildUpload.run(buildId);
      return s.deleteBuild.run(buildId).changes > 0 ? row : undefined;
    }).immediate();
  }

  async staleUploads(before: number): Promise<BuildObject[]> {
    return this.stmt.staleUploads.all(before);
  }

  async gameObjects(gameId: string): Promise<GameObjects> {
    return { game_id: gameId, builds: this.stmt.gameBuilds.all(gameId), export_ids: this.stmt.gameExports.all(gameId) };
  }

  async purgeGame(gameId: string, namespaceId: string, keepGame = false): Promise<PurgedGame> {
    this.games.clear();
    return this.purgeGameTx.immediate(gameId, namespaceId, keepGame);
  }

  async recordPart(uploadId: string, partNumber: number, size: number, sha256: string, now: number): Promise<void> {
    this.stmt.upsertPart.run(uploadId, partNumber, size, sha256, now);
  }

  async listParts(uploadId: string): Promise<PartRow[]> {
    return this.stmt.listParts.all(uploadId);
  }

  async insertExport(exportId: string, gameId: string, csv: string, now: number, expiresTs: number): Promise<void> {
    this.insertExportTx.immediate(exportId, gameId, csv, now, expiresTs);
  }

  async getExport(exportId: string): Promise<{ csv: string; expires_ts: number } | undefined> {
    return this.stmt.getExport.get(exportId);
  }

  async appendLobbyLogs(lobbyId: string, stream: LogStream, lines: Buffer[], now: number, bounds = LOG_BOUNDS, firstTs?: number): Promise<void> {
    if (lines.length > 0) this.appendLogsTx.immediate(lobbyId, stream, lines, now, bounds, firstTs);
  }

  async lobbyLogs(lobbyId: string, stream: LogStream, limit: number, after?: number): Promise<LogLine[]> {
    const rows = after === undefined ? this.stmt.recentLogs.all(lobbyId, stream, limit) : this.stmt.logsAfter.all(lobbyId, stream, after, limit);
    return rows.map((r) => ({ ts: r.ts, line: Buffer.isBuffer(r.line) ? r.line : Buffer.from(r.line) }));
  }

  async ping(): Promise<void> {
    this.stmt.ping.get();
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
