// The Store in PostgreSQL, shared by every emulator replica on one database; like SqliteStore it also keeps the local
// blob store's index (parts received, export CSVs) and the signing secret, so replicas agree on all of it.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { DEFAULT_CONFIG } from '../config.js';
import { migratePostgres } from './migrations.js';
import type {
  BuildRow,
  ConnectOutcome,
  FindOutcome,
  FindQuery,
  GameObjects,
  BuildObject,
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
  LogLine,
  LogStream,
  LogStreamState,
} from './store.js';
import { LOBBY_INSERT_COLUMNS, LOG_BOUNDS, MAX_LOG_LINE_BYTES, NOT_READY, TRIM_PAGE, lobbyInsertValues, nextLogTs, trimLogs } from './store.js';

const SECRET_BYTES = 32;

/**
 * int8 (bigint, and COUNT(*)) read back as a number when it is a safe integer; beyond 2^53 - 1 the query fails
 * with a RangeError naming the value instead of answering a rounded one. The emulator only writes times in
 * milliseconds and sizes below maxUploadBytes (both far below 2^53); a larger value was written by something else.
 */
function parseInt8(text: string): number {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) throw new RangeError(`the emulator database holds ${text}, beyond 2^53 - 1, where a time or a length was expected`);
  return n;
}

const INT8_OID = 20;
const types = {
  getTypeParser(oid: number, format?: string) {
    if (oid === INT8_OID && format !== 'binary') return parseInt8;
    return pg.types.getTypeParser(oid, format as 'text');
  },
};

export interface PostgresStoreOptions {
  /** A postgres:// URL; what it leaves out comes from the PG* variables, as libpq reads them. */
  connectionString: string;
  /** Connections per replica; default 10. */
  max?: number;
  /**
   * The longest a query (the server's statement_timeout and the client's own timer, which also fires when the
   * server is stalled and sends nothing) or the wait for a connection may take; default DEFAULT_CONFIG's.
   */
  timeoutMs?: number;
}

type Queryable = pg.Pool | pg.PoolClient;

const ignore = (): void => {};

const INSERT_LOBBY = `INSERT INTO lobbies (${LOBBY_INSERT_COLUMNS})
  VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23)`;
const INSERT_PLAYER = `INSERT INTO players (player_id, lobby_id, create_ts, source_ip, register_by_ts, connect_ts)
  VALUES ($1, $2, $3, $4, $5, $6)`;
// A pending player past its registration time is removed, and a lobby (made by find or by create) stops once that
// leaves it empty, at the time the last one expired; one statement, so each player is removed (and counted) by one replica.
const EXPIRE_PLAYERS = `
WITH gone AS (
  UPDATE players SET remove_ts = register_by_ts
   WHERE connect_ts IS NULL AND remove_ts IS NULL AND register_by_ts <= $1
  RETURNING lobby_id, register_by_ts),
counts AS (SELECT lobby_id, COUNT(*) AS n, MAX(register_by_ts) AS last FROM gone GROUP BY lobby_id)
UPDATE lobbies l SET player_count = l.player_count - c.n,
  stop_ts = CASE WHEN l.stop_ts IS NULL AND l.player_count - c.n <= 0 THEN c.last ELSE l.stop_ts END,
  exit_code = CASE WHEN l.stop_ts IS NULL AND l.player_count - c.n <= 0 THEN 0 ELSE l.exit_code END,
  failed = CASE WHEN l.stop_ts IS NULL AND l.player_count - c.n <= 0 THEN 0 ELSE l.failed END
 FROM counts c WHERE l.lobby_id = c.lobby_id`;
const STOP_IF_EMPTY = `UPDATE lobbies SET stop_ts = $1, exit_code = 0, failed = 0
  WHERE lobby_id = $2 AND stop_ts IS NULL AND player_count <= 0`;
// The fullest running, open, public lobby of the query with room for one more (jsonb @> holds every tag asked).
const FIND_CANDIDATE = `SELECT * FROM lobbies
  WHERE namespace_id = $1 AND game_mode = ANY($2) AND region_id = ANY($3) AND stop_ts IS NULL AND is_closed = 0
    AND publicity = 'public' AND player_count < max_players AND tags::jsonb @> $4::jsonb
    AND (owner IS NULL OR EXISTS (SELECT 1 FROM replicas r WHERE r.replica = lobbies.owner AND r.seen_ts >= $5))
  ORDER BY player_count DESC, create_ts, lobby_id COLLATE "C" LIMIT 1`;
const PENDING_FROM_SOURCE = `SELECT COUNT(*) AS n FROM players p JOIN lobbies l ON l.lobby_id = p.lobby_id
  WHERE p.source_ip = $1 AND p.connect_ts IS NULL AND p.remove_ts IS NULL AND l.namespace_id = $2 AND l.stop_ts IS NULL`;

function playerValues(lobby: LobbyRow, player: NewPlayer, now: number): unknown[] {
  const registerBy = player.connected ? null : Math.max(now, lobby.ready_ts) + player.registration_ms;
  return [player.player_id, lobby.lobby_id, now, player.source_ip, registerBy, player.connected ? now : null];
}

/**
 * node-postgres 8 treats sslmode prefer, require and verify-ca as verify-full, and says so in a ten-line warning
 * on stderr for every start. Written as what it means, the behaviour is the same and the start says one line.
 */
function explicitSslMode(connectionString: string): string {
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    return connectionString;
  }
  const mode = url.searchParams.get('sslmode');
  if (!mode || !['prefer', 'require', 'verify-ca'].includes(mode) || url.searchParams.has('uselibpqcompat')) return connectionString;
  url.searchParams.set('sslmode', 'verify-full');
  return url.toString();
}

/**
 * Log bytes the appends of one replica drop (its streams past their bound) before it vacuums lobby_logs: the rows it
 * deletes stay on disk as dead tuples until a vacuum, and autovacuum looks at most once a minute, so a server
 * printing fast would grow the database by all it printed in that minute, not by the bound.
 */
const VACUUM_AFTER_BYTES = 16 * 1024 * 1024;

export class PostgresStore implements Store, LocalObjectIndex {
  /** Log bytes dropped since the last vacuum of lobby_logs, and that vacuum while it runs. */
  private dropped = 0;
  private vacuuming: Promise<void> | undefined;

  private constructor(private readonly pool: pg.Pool) {}

  /** Connects, migrates the schema (one replica at a time) and answers the store; closes the pool on failure. */
  static async open(opts: PostgresStoreOptions): Promise<PostgresStore> {
    const timeout = opts.timeoutMs ?? DEFAULT_CONFIG.storeTimeoutMs;
    const pool = new pg.Pool({
      connectionString: explicitSslMode(opts.connectionString),
      max: opts.max ?? 10,
      types,
      // A database that does not answer fails a request (and the health check) instead of holding it forever.
      connectionTimeoutMillis: timeout,
      statement_timeout: timeout,
      query_timeout: timeout,
      application_name: 'gamehost-emulator',
    });
    // A connection the server drops (a restart, a failover, pg_terminate_backend) reports it as an error event: on
    // the pool while the connection is idle, on the connection itself while it is lent out, where pg-pool listens
    // for nothing. Each connection gets a listener of its own from its start, so neither is a crash; a query on a
    // lent-out one fails, and the connection is then given back broken.
    pool.on('error', ignore);
    pool.on('connect', (client) => client.on('error', ignore));
    try {
      await migratePostgres(pool);
      return new PostgresStore(pool);
    } catch (err) {
      await pool.end().catch(() => {});
      throw err;
    }
  }

  /** The signing secret: made by the first replica, read by every other (INSERT ... ON CONFLICT DO NOTHING). */
  async secret(): Promise<Buffer> {
    await this.pool.query("INSERT INTO meta (key, value) VALUES ('secret', $1) ON CONFLICT (key) DO NOTHING", [
      randomBytes(SECRET_BYTES).toString('hex'),
    ]);
    const { rows } = await this.pool.query<{ value: string }>("SELECT value FROM meta WHERE key = 'secret'");
    return Buffer.from(rows[0]!.value, 'hex');
  }

  /** Runs `body` in one transaction on one connection: committed when it returns, rolled back when it throws. */
  private async transaction<T>(body: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await body(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      // A connection that cannot even roll back is not given back to the pool; nor is one whose query timed out (the
      // rollback would wait behind it as long again).
      if (/timeout/i.test((err as Error).message)) broken = err as Error;
      else await client.query('ROLLBACK').catch((rollbackErr: Error) => (broken = rollbackErr));
      throw err;
    } finally {
      client.release(broken);
    }
  }

  async insertGame(game: GameRow): Promise<void> {
    await this.pool.query(
      `INSERT INTO games (game_id, namespace_id, name, game_modes, regions, create_ts, expire_ts)
       VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [game.game_id, game.namespace_id, game.name, game.game_modes, game.regions, game.create_ts, game.expire_ts],
    );
  }

  async getGame(gameId: string): Promise<GameRow | undefined> {
    // Read on every request with a created game's token, and never cached: a deletion begun through another replica
    // refuses the token here at once. Named: planned once per connection.
    return (await this.pool.query<GameRow>({ name: 'get-game', text: 'SELECT * FROM games WHERE game_id = $1', values: [gameId] })).rows[0];
  }

  async listGames(): Promise<GameRow[]> {
    const { rows } = await this.pool.query<GameRow>('SELECT * FROM games WHERE delete_ts IS NULL ORDER BY create_ts, game_id COLLATE "C"');
    return rows;
  }

  async claimGameDeletion(gameId: string, now: number): Promise<boolean> {
    // One conditional UPDATE: of replicas deleting the same game at once, exactly one changes the row.
    const result = await this.pool.query('UPDATE games SET delete_ts = $1 WHERE game_id = $2 AND delete_ts IS NULL', [now, gameId]);
    return result.rowCount === 1;
  }

  async claimExpiredGames(now: number, staleMs: number): Promise<{ expired: string[]; stale: string[] }> {
    // A replica that waited on another's row lock re-checks the condition on the row as committed (READ COMMITTED),
    // finds delete_ts set to now, and skips it: each game is claimed by one sweep.
    const claim = async (where: string, values: number[]) =>
      (await this.pool.query<{ game_id: string }>(`UPDATE games SET delete_ts = $1 WHERE ${where} RETURNING game_id`, values)).rows.map((r) => r.game_id);
    return {
      expired: await claim('delete_ts IS NULL AND expire_ts <= $1', [now]),
      stale: await claim('delete_ts IS NOT NULL AND delete_ts < $2', [now, now - staleMs]),
    };
  }

  async deleteBuild(buildId: string): Promise<BuildObject | undefined> {
    return this.transaction(async (c): Promise<BuildObject | undefined> => {
      // The row locked first: of two deletes of one build, one answers it and the other nothing.
      const { rows } = await c.query<BuildObject>('SELECT game_id, build_id, upload_id FROM builds WHERE build_id = $1 FOR UPDATE', [buildId]);
      const row = rows[0];
      if (row === undefined) return undefined;
      await c.query('DELETE FROM upload_parts WHERE upload_id = $1', [row.upload_id]);
      await c.query('DELETE FROM uploads WHERE build_id = $1', [buildId]);
      await c.query('DELETE FROM builds WHERE build_id = $1', [buildId]);
      return row;
    });
  }

  async staleUploads(before: number): Promise<BuildObject[]> {
    const { rows } = await this.pool.query<BuildObject>('SELECT game_id, build_id, upload_id FROM builds WHERE complete = 0 AND create_ts < $1', [before]);
    return rows;
  }

  async gameObjects(gameId: string): Promise<GameObjects> {
    const [builds, exports] = await Promise.all([
      this.pool.query<{ build_id: string; upload_id: string }>('SELECT build_id, upload_id FROM builds WHERE game_id = $1', [gameId]),
      this.pool.query<{ export_id: string }>('SELECT export_id FROM exports WHERE game_id = $1', [gameId]),
    ]);
    return { game_id: gameId, builds: builds.rows, export_ids: exports.rows.map((r) => r.export_id) };
  }

  async purgeGame(gameId: string, namespaceId: string, keepGame = false): Promise<PurgedGame> {
    return this.transaction(async (c): Promise<PurgedGame> => {
      // Children before parents (the foreign keys): players, lobbies, parts, uploads, builds; then exports, the game.
      // The lobbies' output first, while their rows still say which namespace they were in.
      for (const table of ['lobby_logs', 'lobby_log_streams', 'lobby_samples'])
        await c.query(`DELETE FROM ${table} WHERE lobby_id IN (SELECT lobby_id FROM lobbies WHERE namespace_id = $1)`, [namespaceId]);
      const players = (await c.query('DELETE FROM players WHERE lobby_id IN (SELECT lobby_id FROM lobbies WHERE namespace_id = $1)', [namespaceId])).rowCount ?? 0;
      const lobbies = (await c.query('DELETE FROM lobbies WHERE namespace_id = $1', [namespaceId])).rowCount ?? 0;
      await c.query('DELETE FROM upload_parts WHERE upload_id IN (SELECT upload_id FROM builds WHERE game_id = $1)', [gameId]);
      await c.query('DELETE FROM uploads WHERE build_id IN (SELECT build_id FROM builds WHERE game_id = $1)', [gameId]);
      const builds = (await c.query('DELETE FROM builds WHERE game_id = $1', [gameId])).rowCount ?? 0;
      const exports = (await c.query('DELETE FROM exports WHERE game_id = $1', [gameId])).rowCount ?? 0;
      if (!keepGame) await c.query('DELETE FROM games WHERE game_id = $1', [gameId]);
      return { lobbies, players, builds, exports };
    });
  }

  async insertLobby(lobby: LobbyRow, player: NewPlayer): Promise<void> {
    await this.transaction(async (c) => {
      // Named: the server parses and plans the hot path once per connection, not once per create.
      await c.query({ name: 'insert-lobby', text: INSERT_LOBBY, values: lobbyInsertValues({ ...lobby, player_count: 1 }) });
      await c.query({ name: 'insert-player', text: INSERT_PLAYER, values: playerValues(lobby, player, lobby.create_ts) });
    });
  }

  private async tooManyFromSource(c: Queryable, namespaceId: string, player: NewPlayer, limit: number | null): Promise<boolean> {
    if (limit === null || player.connected) return false;
    const { rows } = await c.query<{ n: number }>({ name: 'pending-from-source', text: PENDING_FROM_SOURCE, values: [player.source_ip, namespaceId] });
    return rows[0]!.n >= limit;
  }

  /** Adds the player to a lobby whose row this transaction holds locked. */
  private async enter(c: pg.PoolClient, lobby: LobbyRow, player: NewPlayer, now: number): Promise<LobbyRow> {
    await c.query({ name: 'insert-player', text: INSERT_PLAYER, values: playerValues(lobby, player, now) });
    const idle = lobby.idle_lifetime_ms === null ? null : Math.max(lobby.ready_ts, now) + lobby.idle_lifetime_ms;
    await c.query({
      name: 'enter-lobby',
      text: 'UPDATE lobbies SET player_count = player_count + 1, idle_stop_ts = COALESCE($2, idle_stop_ts) WHERE lobby_id = $1',
      values: [lobby.lobby_id, idle],
    });
    return { ...lobby, player_count: lobby.player_count + 1, idle_stop_ts: idle ?? lobby.idle_stop_ts };
  }

  async joinLobby(lobbyId: string, player: NewPlayer, now: number, sourceLimit: number | null): Promise<JoinOutcome> {
    // Expiries first, in their own statements: they lock players before lobbies, and this locks the lobby first.
    await this.expireIdle(now);
    return this.transaction(async (c): Promise<JoinOutcome> => {
      // The row lock serialises joins to one lobby (SQLite's write lock does this there); other lobbies go on.
      const lobby = (await c.query<LobbyRow>('SELECT * FROM lobbies WHERE lobby_id = $1 FOR UPDATE', [lobbyId])).rows[0];
      if (lobby === undefined) return { kind: 'not_found' };
      if (lobby.stop_ts !== null) return { kind: 'stopped', lobby };
      const players = lobby.player_count;
      if (players >= lobby.max_players) return { kind: 'full', lobby, players };
      if (await this.tooManyFromSource(c, lobby.namespace_id, player, sourceLimit)) return { kind: 'too_many_from_source' };
      return { kind: 'joined', lobby: await this.enter(c, lobby, player, now), players: players + 1 };
    });
  }

  async findLobby(query: FindQuery, player: NewPlayer, create: LobbyRow | null): Promise<FindOutcome> {
    const { now } = query;
    await this.expireIdle(now);
    return this.transaction(async (c): Promise<FindOutcome> => {
      // Finds of one namespace take turns across replicas (its lobbies are what they compare and create); joins
      // and other namespaces go on, and the chosen lobby's row lock orders a find with the joins to it.
      await c.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`find:${query.namespace_id}`]);
      if (await this.tooManyFromSource(c, query.namespace_id, player, query.source_limit)) return { kind: 'too_many_from_source' };
      const values = [query.namespace_id, query.game_modes, query.region_ids, JSON.stringify(query.tags), query.served_since];
      // A join may fill the candidate between the search and its lock: then look again.
      for (let attempt = 0; attempt < 8; attempt++) {
        const candidate = (await c.query<LobbyRow>({ name: 'find-candidate', text: FIND_CANDIDATE, values })).rows[0];
        if (candidate === undefined) break;
        const lobby = (await c.query<LobbyRow>('SELECT * FROM lobbies WHERE lobby_id = $1 FOR UPDATE', [candidate.lobby_id])).rows[0]!;
        if (lobby.stop_ts === null && lobby.is_closed === 0 && lobby.player_count < lobby.max_players)
          return { kind: 'joined', lobby: await this.enter(c, lobby, player, now), created: false };
      }
      if (create === null) return { kind: 'none' };
      const running = (
        await c.query<{ n: number }>('SELECT COUNT(*) AS n FROM lobbies WHERE namespace_id = $1 AND stop_ts IS NULL', [query.namespace_id])
      ).rows[0]!.n;
      if (running >= query.max_lobbies) return { kind: 'too_many_lobbies' };
      const lobby = { ...create, player_count: 1 };
      await c.query({ name: 'insert-lobby', text: INSERT_LOBBY, values: lobbyInsertValues(lobby) });
      await c.query({ name: 'insert-player', text: INSERT_PLAYER, values: playerValues(lobby, player, now) });
      return { kind: 'joined', lobby, created: true };
    });
  }

  async expireIdle(now: number): Promise<void> {
    // What time decides stops at that time, not when someone happens to look, so every reader agrees.
    await this.pool.query(
      `UPDATE lobbies SET stop_ts = idle_stop_ts, exit_code = 0, failed = 0
        WHERE stop_ts IS NULL AND idle_stop_ts IS NOT NULL AND idle_stop_ts <= $1`,
      [now],
    );
    await this.pool.query(
      `UPDATE lobbies SET stop_ts = ready_deadline_ts, exit_code = 0, failed = 1
        WHERE stop_ts IS NULL AND ready_deadline_ts IS NOT NULL AND ready_deadline_ts <= $1`,
      [now],
    );
    await this.pool.query({ name: 'expire-players', text: EXPIRE_PLAYERS, values: [now] });
  }

  async readyLobby(lobbyId: string, now: number, registrationMs: number): Promise<LobbyRow | undefined> {
    await this.expireIdle(now);
    return this.transaction(async (c) => {
      const marked = await c.query(
        `UPDATE lobbies SET start_ts = LEAST(start_ts, $1), ready_ts = $1, ready_deadline_ts = NULL,
           idle_stop_ts = CASE WHEN idle_lifetime_ms IS NULL THEN NULL ELSE $1 + idle_lifetime_ms END
          WHERE lobby_id = $2 AND stop_ts IS NULL AND ready_ts > $1`,
        [now, lobbyId],
      );
      if (marked.rowCount === 1)
        await c.query('UPDATE players SET register_by_ts = $1 WHERE lobby_id = $2 AND connect_ts IS NULL AND remove_ts IS NULL', [
          now + registrationMs,
          lobbyId,
        ]);
      return (await c.query<LobbyRow>('SELECT * FROM lobbies WHERE lobby_id = $1', [lobbyId])).rows[0];
    });
  }

  async setLobbyClosed(lobbyId: string, closed: boolean): Promise<void> {
    await this.pool.query('UPDATE lobbies SET is_closed = $1 WHERE lobby_id = $2', [closed ? 1 : 0, lobbyId]);
  }

  async setLobbyState(lobbyId: string, state: string | null): Promise<void> {
    await this.pool.query('UPDATE lobbies SET state = $1 WHERE lobby_id = $2', [state, lobbyId]);
  }

  async getPlayer(playerId: string): Promise<PlayerRow | undefined> {
    const { rows } = await this.pool.query<PlayerRow>(
      'SELECT player_id, lobby_id, create_ts, register_by_ts, connect_ts, remove_ts FROM players WHERE player_id = $1',
      [playerId],
    );
    return rows[0];
  }

  async connectPlayer(playerId: string, lobbyId: string, now: number): Promise<ConnectOutcome> {
    await this.expireIdle(now);
    return this.transaction(async (c): Promise<ConnectOutcome> => {
      // The player's row lock: of two servers presenting one token at once, one connects it.
      const player = (
        await c.query<PlayerRow>('SELECT player_id, lobby_id, register_by_ts, connect_ts, remove_ts FROM players WHERE player_id = $1 FOR UPDATE', [playerId])
      ).rows[0];
      if (player === undefined) return 'removed';
      if (player.lobby_id !== lobbyId) return 'different_lobby';
      if (player.connect_ts !== null) return 'already_connected';
      if (player.register_by_ts !== null && player.register_by_ts <= now) return 'expired';
      const lobby = (await c.query<{ stop_ts: number | null }>('SELECT stop_ts FROM lobbies WHERE lobby_id = $1', [lobbyId])).rows[0];
      if (player.remove_ts !== null || lobby?.stop_ts !== null) return 'removed';
      await c.query('UPDATE players SET connect_ts = $1 WHERE player_id = $2', [now, playerId]);
      return 'connected';
    });
  }

  async disconnectPlayer(playerId: string, lobbyId: string, now: number): Promise<'removed' | 'different_lobby'> {
    await this.expireIdle(now);
    return this.transaction(async (c) => {
      const player = (await c.query<{ lobby_id: string }>('SELECT lobby_id FROM players WHERE player_id = $1', [playerId])).rows[0];
      if (player === undefined) return 'removed';
      if (player.lobby_id !== lobbyId) return 'different_lobby';
      const removed = await c.query('UPDATE players SET remove_ts = $1 WHERE player_id = $2 AND remove_ts IS NULL', [now, playerId]);
      if (removed.rowCount === 1) {
        await c.query('UPDATE lobbies SET player_count = player_count - 1 WHERE lobby_id = $1', [lobbyId]);
        await c.query(STOP_IF_EMPTY, [now, lobbyId]);
      }
      return 'removed';
    });
  }

  async listLobbies(namespaceId: string): Promise<ListedLobby[]> {
    const { rows } = await this.pool.query<ListedLobby>(
      `SELECT l.*, (SELECT COUNT(*) FROM players p WHERE p.lobby_id = l.lobby_id AND p.connect_ts IS NOT NULL
           AND p.remove_ts IS NULL) AS connected
         FROM lobbies l WHERE l.namespace_id = $1 AND l.stop_ts IS NULL AND l.publicity = 'public'
        ORDER BY l.create_ts, l.lobby_id COLLATE "C"`,
      [namespaceId],
    );
    return rows;
  }

  async getLobby(lobbyId: string): Promise<LobbyRow | undefined> {
    return (await this.pool.query<LobbyRow>('SELECT * FROM lobbies WHERE lobby_id = $1', [lobbyId])).rows[0];
  }

  async setLobbyServer(lobbyId: string, pid: number, start: number): Promise<void> {
    await this.pool.query('UPDATE lobbies SET server_pid = $1, server_start = $2 WHERE lobby_id = $3', [pid, start, lobbyId]);
  }

  async setReadyDeadline(lobbyId: string, deadline: number | null): Promise<void> {
    await this.pool.query('UPDATE lobbies SET ready_deadline_ts = $1 WHERE lobby_id = $2 AND stop_ts IS NULL AND ready_ts = $3', [deadline, lobbyId, NOT_READY]);
  }

  async ownedLobbies(owner: string): Promise<LobbyRow[]> {
    const sql = 'SELECT * FROM lobbies WHERE owner = $1 AND stop_ts IS NULL AND owner IS NOT NULL ORDER BY create_ts, lobby_id COLLATE "C"';
    return (await this.pool.query<LobbyRow>(sql, [owner])).rows;
  }

  async touchReplica(replica: string, now: number): Promise<void> {
    await this.pool.query(
      'INSERT INTO replicas (replica, seen_ts) VALUES ($1, $2) ON CONFLICT (replica) DO UPDATE SET seen_ts = GREATEST(replicas.seen_ts, EXCLUDED.seen_ts)',
      [replica, now],
    );
  }

  async replicaSeen(replica: string): Promise<number | undefined> {
    const row = (await this.pool.query<{ seen_ts: number }>('SELECT seen_ts FROM replicas WHERE replica = $1', [replica])).rows[0];
    return row?.seen_ts;
  }

  async purgeStoppedLogs(before: number, limit: number): Promise<number> {
    return this.transaction(async (c) => {
      const ids = (
        await c.query<{ lobby_id: string }>(
          `SELECT x.lobby_id FROM (SELECT lobby_id FROM lobby_log_streams UNION SELECT lobby_id FROM lobby_samples) x
             JOIN lobbies l ON l.lobby_id = x.lobby_id WHERE l.stop_ts IS NOT NULL AND l.stop_ts < $1 LIMIT $2`,
          [before, limit],
        )
      ).rows.map((r) => r.lobby_id);
      for (const table of ['lobby_logs', 'lobby_log_streams', 'lobby_samples']) await c.query(`DELETE FROM ${table} WHERE lobby_id = ANY($1)`, [ids]);
      return ids.length;
    });
  }

  async setLobbySamples(lobbyId: string, samples: string): Promise<void> {
    await this.pool.query(
      'INSERT INTO lobby_samples (lobby_id, samples) VALUES ($1, $2) ON CONFLICT (lobby_id) DO UPDATE SET samples = EXCLUDED.samples',
      [lobbyId, samples],
    );
  }

  async lobbySamples(lobbyId: string): Promise<string | undefined> {
    return (await this.pool.query<{ samples: string }>('SELECT samples FROM lobby_samples WHERE lobby_id = $1', [lobbyId])).rows[0]?.samples;
  }

  async stopLobby(lobbyId: string, stopTs: number, exitCode: number, failed: boolean): Promise<boolean> {
    const result = await this.pool.query(
      'UPDATE lobbies SET stop_ts = $1, exit_code = $2, failed = $3 WHERE lobby_id = $4 AND stop_ts IS NULL',
      [stopTs, exitCode, failed ? 1 : 0, lobbyId],
    );
    return result.rowCount === 1;
  }

  async playerCounts(namespaceId: string): Promise<PlayerCountRow[]> {
    // A few rows kept by triggers, however many lobbies run.
    const { rows } = await this.pool.query<PlayerCountRow>({
      name: 'player-counts',
      text: 'SELECT game_mode, region_id, player_count FROM running_players WHERE namespace_id = $1 AND player_count > 0',
      values: [namespaceId],
    });
    return rows;
  }

  async lobbyHistory(namespaceId: string, queryStart: number, queryEnd: number): Promise<LobbyRow[]> {
    // The production export query: stopped in the window, created in it, or running and created before its end.
    const { rows } = await this.pool.query<LobbyRow>(
      `SELECT * FROM lobbies
        WHERE namespace_id = $1 AND (
          (stop_ts > $2 AND stop_ts <= $3) OR
          (create_ts > $2 AND create_ts <= $3) OR
          (stop_ts IS NULL AND create_ts <= $3))
        ORDER BY create_ts DESC, lobby_id COLLATE "C"`,
      [namespaceId, queryStart, queryEnd],
    );
    return rows;
  }

  async insertBuild(build: BuildRow, upload: NewUpload): Promise<boolean> {
    return this.transaction(async (c) => {
      // The unique (game_id, image_tag) constraint decides: a taken tag inserts nothing and answers false.
      const inserted = await c.query(
        `INSERT INTO builds (build_id, game_id, upload_id, display_name, image_tag, kind, compression, path,
           content_type, content_length, create_ts) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT ON CONSTRAINT builds_game_tag DO NOTHING`,
        [
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
        ],
      );
      if (inserted.rowCount !== 1) return false;
      await c.query('INSERT INTO uploads (upload_id, build_id, content_length, part_size, part_count) VALUES ($1, $2, $3, $4, $5)', [
        upload.upload_id,
        upload.build_id,
        upload.content_length,
        upload.part_size,
        upload.part_count,
      ]);
      return true;
    });
  }

  async getUpload(uploadId: string): Promise<UploadRow | undefined> {
    const { rows } = await this.pool.query<UploadRow>(
      `SELECT u.upload_id, u.build_id, b.game_id, u.content_length, u.part_size, u.part_count, u.state, u.claim_ts
         FROM uploads u JOIN builds b ON b.build_id = u.build_id WHERE u.upload_id = $1`,
      [uploadId],
    );
    return rows[0];
  }

  async claimUpload(uploadId: string, now: number, staleMs: number): Promise<boolean> {
    // One conditional UPDATE: of any number of replicas claiming at once, exactly one changes the row.
    const result = await this.pool.query(
      `UPDATE uploads SET state = 'assembling', claim_ts = $1
        WHERE upload_id = $2 AND (state = 'pending' OR (state = 'assembling' AND claim_ts < $3))`,
      [now, uploadId, now - staleMs],
    );
    return result.rowCount === 1;
  }

  async touchClaim(uploadId: string, now: number): Promise<void> {
    await this.pool.query("UPDATE uploads SET claim_ts = $1 WHERE upload_id = $2 AND state = 'assembling'", [now, uploadId]);
  }

  async releaseUpload(uploadId: string): Promise<void> {
    await this.pool.query("UPDATE uploads SET state = 'pending', claim_ts = NULL WHERE upload_id = $1 AND state = 'assembling'", [uploadId]);
  }

  async completeUpload(upload: UploadRow, sha256: string, size: number, now: number): Promise<void> {
    await this.transaction(async (c) => {
      await c.query('UPDATE builds SET sha256 = $1, content_length = $2, complete = 1, complete_ts = $3 WHERE build_id = $4', [
        sha256,
        size,
        now,
        upload.build_id,
      ]);
      await c.query("UPDATE uploads SET state = 'complete' WHERE upload_id = $1", [upload.upload_id]);
    });
  }

  async listBuilds(gameId: string): Promise<BuildRow[]> {
    const { rows } = await this.pool.query<BuildRow>('SELECT * FROM builds WHERE game_id = $1 ORDER BY create_ts DESC, build_id COLLATE "C"', [gameId]);
    return rows;
  }

  async recordPart(uploadId: string, partNumber: number, size: number, sha256: string, now: number): Promise<void> {
    await this.pool.query(
      `INSERT INTO upload_parts (upload_id, part_number, size, sha256, update_ts) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (upload_id, part_number) DO UPDATE SET size = excluded.size, sha256 = excluded.sha256,
         update_ts = excluded.update_ts`,
      [uploadId, partNumber, size, sha256, now],
    );
  }

  async listParts(uploadId: string): Promise<PartRow[]> {
    const { rows } = await this.pool.query<PartRow>(
      'SELECT part_number, size, sha256 FROM upload_parts WHERE upload_id = $1 ORDER BY part_number',
      [uploadId],
    );
    return rows;
  }

  async insertExport(exportId: string, gameId: string, csv: string, now: number, expiresTs: number): Promise<void> {
    await this.transaction(async (c) => {
      await c.query('DELETE FROM exports WHERE expires_ts < $1', [now]);
      // An export of the same id (a lobby stream's: one file each) replaces the last.
      await c.query(
        `INSERT INTO exports (export_id, game_id, csv, create_ts, expires_ts) VALUES ($1, $2, $3, $4, $5)
           ON CONFLICT (export_id) DO UPDATE SET csv = EXCLUDED.csv, create_ts = EXCLUDED.create_ts, expires_ts = EXCLUDED.expires_ts`,
        [
        exportId,
        gameId,
        csv,
        now,
        expiresTs,
      ],
      );
    });
  }

  async getExport(exportId: string): Promise<{ csv: string; expires_ts: number } | undefined> {
    const { rows } = await this.pool.query<{ csv: string; expires_ts: number }>(
      'SELECT csv, expires_ts FROM exports WHERE export_id = $1',
      [exportId],
    );
    return rows[0];
  }

  async appendLobbyLogs(lobbyId: string, stream: LogStream, lines: Buffer[], now: number, bounds = LOG_BOUNDS, firstTs?: number): Promise<void> {
    if (lines.length === 0) return;
    let dropped = 0;
    await this.transaction(async (c) => {
      // The stream's row, locked: appends to one stream take turns, so stamps never repeat or go back.
      await c.query(
        'INSERT INTO lobby_log_streams (lobby_id, stream, last_ts, line_count, byte_count) VALUES ($1, $2, 0, 0, 0) ON CONFLICT DO NOTHING',
        [lobbyId, stream],
      );
      const state = (
        await c.query<LogStreamState>(
          'SELECT last_ts, line_count, byte_count FROM lobby_log_streams WHERE lobby_id = $1 AND stream = $2 FOR UPDATE',
          [lobbyId, stream],
        )
      ).rows[0]!;
      if (firstTs !== undefined && state.last_ts >= firstTs) return;
      const stamps: number[] = [];
      const cut: Buffer[] = [];
      for (const raw of lines) {
        const line = raw.length > MAX_LOG_LINE_BYTES ? raw.subarray(0, MAX_LOG_LINE_BYTES) : raw;
        state.last_ts = nextLogTs(state.last_ts, now, firstTs);
        stamps.push(state.last_ts);
        cut.push(line);
        state.line_count++;
        state.byte_count += line.length;
      }
      await c.query(
        'INSERT INTO lobby_logs (lobby_id, stream, ts, line) SELECT $1, $2, unnest($3::bigint[]), unnest($4::bytea[])',
        [lobbyId, stream, stamps, cut],
      );
      let cutoff: number | null = null;
      const bytes = state.byte_count;
      for (let more = true; more; ) {
        const page = await c.query<{ ts: number; n: number }>(
          'SELECT ts, octet_length(line) AS n FROM lobby_logs WHERE lobby_id = $1 AND stream = $2 AND ts > $3 ORDER BY ts LIMIT $4',
          [lobbyId, stream, cutoff ?? -1, TRIM_PAGE],
        );
        const step = trimLogs(state, bounds, page.rows);
        cutoff = step.cutoff ?? cutoff;
        more = step.more;
      }
      if (cutoff !== null) await c.query('DELETE FROM lobby_logs WHERE lobby_id = $1 AND stream = $2 AND ts <= $3', [lobbyId, stream, cutoff]);
      dropped = bytes - state.byte_count;
      await c.query('UPDATE lobby_log_streams SET last_ts = $3, line_count = $4, byte_count = $5 WHERE lobby_id = $1 AND stream = $2', [
        lobbyId,
        stream,
        state.last_ts,
        state.line_count,
        state.byte_count,
      ]);
    });
    this.dropped += dropped;
    if (this.dropped >= VACUUM_AFTER_BYTES && this.vacuuming === undefined) {
      this.dropped = 0;
      // In the background, never failing the append: the space of the rows dropped is reused by the next ones.
      this.vacuuming = this.pool
        .query('VACUUM lobby_logs')
        .then(() => {}, () => {})
        .finally(() => (this.vacuuming = undefined));
    }
  }

  async lobbyLogs(lobbyId: string, stream: LogStream, limit: number, after?: number): Promise<LogLine[]> {
    const { rows } =
      after === undefined
        ? await this.pool.query<LogLine>(
            `SELECT ts, line FROM (SELECT ts, line FROM lobby_logs WHERE lobby_id = $1 AND stream = $2 ORDER BY ts DESC LIMIT $3) AS recent
              ORDER BY ts`,
            [lobbyId, stream, limit],
          )
        : await this.pool.query<LogLine>('SELECT ts, line FROM lobby_logs WHERE lobby_id = $1 AND stream = $2 AND ts > $3 ORDER BY ts LIMIT $4', [
            lobbyId,
            stream,
            after,
            limit,
          ]);
    return rows;
  }

  async ping(): Promise<void> {
    await this.pool.query('SELECT 1 FROM schema_version');
  }

  async close(): Promise<void> {
    await this.vacuuming;
    if (!this.pool.ended) await this.pool.end();
  }
}
