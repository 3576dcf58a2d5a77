// The Store written once for SQLite and PostgreSQL. Each query is built with Kysely from the row types, compiled
// once per engine (Kysely only prints SQL here: it has no connection of its own), and run over the engine's own
// driver (sqlite.ts, postgres.ts), which keeps its own transactions and locking and the few pieces of SQL that differ.
import { DummyDriver, Kysely, sql, type Compilable, type DialectAdapter, type Expression, type QueryCompiler, type RawBuilder } from './kysely.js';
import type { DatabaseIntrospector, SelectQueryBuilder, SqlBool } from './kysely.js';
import type { BuildObject, BuildRow, ConnectOutcome, FindOutcome, FindQuery, GameObjects, GameRow, HistoryCursor, IdleInsert, IdleKey, JoinOutcome, LobbyRow, ListedLobby } from './store.js';
import type { LocalObjectIndex, LogBounds, LogChunk, LogLine, LogStream, LogStreamState, NewPlayer, NewUpload, PartRow, PlayerCountRow } from './store.js';
import type { NamespaceRow, NamespaceVersionRow, PlayerRow, PurgedGame, Store, UploadRow, VersionRow } from './store.js';
import { LOBBY_INSERT_COLUMNS, LOG_BOUNDS, MAX_LOG_LINE_BYTES, NOT_READY, NamespaceChanged, TRIM_PAGE, fromChunk, namespaceStamp, nextLogTs, splitChunk, toChunks, trimLogs } from './store.js';

/** The tables as the store reads and writes them (migrations.ts makes them). */
export interface DB {
  lobbies: LobbyRow;
  players: PlayerRow & { source_ip: string };
  builds: BuildRow;
  uploads: Omit<UploadRow, 'game_id'>;
  upload_parts: PartRow & { upload_id: string; update_ts: number };
  exports: { export_id: string; game_id: string; csv: string; create_ts: number; expires_ts: number };
  games: GameRow;
  versions: VersionRow;
  version_names: { game_id: string; day: string; n: number };
  namespaces: NamespaceRow;
  namespace_versions: NamespaceVersionRow & { seq: number };
  replicas: { replica: string; seen_ts: number };
  // A row holds a run of lines (LogChunk): `ts` the stamp of its last, `line` their bytes, `lengths` each one's.
  lobby_logs: { lobby_id: string; stream: LogStream; ts: number; line: Buffer; line_count: number; lengths: Buffer | null };
  lobby_log_streams: LogStreamState & { lobby_id: string; stream: LogStream };
  lobby_samples: { lobby_id: string; samples: string };
  running_players: PlayerCountRow & { namespace_id: string };
  running_lobbies: { namespace_id: string; lobby_count: number };
  meta: { key: string; value: string };
}

/** A parameter of a statement compiled once: it stands in for its value at compile time, and picks it at each call. */
class Slot {
  constructor(readonly pick: (args: never) => unknown) {}
}

/** The parameters of a statement, each a Slot typed as its value. */
function slots<P>(): P {
  return new Proxy({}, { get: (_, name: string) => new Slot((args: Record<string, unknown>) => args[name]) }) as P;
}

/** A compiled statement: its SQL for one engine and how to bind its arguments. */
export interface Compiled {
  readonly sql: string;
  /** Unique per statement, for engines that keep statements prepared by name. */
  readonly name: string;
  bind(args: object): unknown[];
}

/** What differs in the SQL of the two engines, used while building a query. */
export interface SqlDialect {
  /** The sort order of text, byte by byte (SQLite's), for ORDER BY. */
  binary(column: string): Expression<string>;
  /** The row locked until the transaction ends, where the engine locks rows (SQLite's write lock is the database's). */
  forUpdate<Q extends SelectQueryBuilder<DB, keyof DB, object>>(query: Q): Q;
  /** The length of a blob in bytes. */
  byteLength(column: string): RawBuilder<number>;
  /** `column` is one of `values` (an argument: a list of text). */
  oneOf(column: string, values: string[]): Expression<SqlBool>;
  /** `column` (a JSON object) holds every tag of `tags` (an argument). */
  hasTags(column: string, tags: Record<string, string>): Expression<SqlBool>;
}

/** What an engine's Kysely is made of (its driver is never used: Kysely only compiles here). */
export interface KyselyParts {
  adapter: DialectAdapter;
  introspector: (db: Kysely<DB>) => DatabaseIntrospector;
  queryCompiler: () => QueryCompiler;
}

type Build<P> = (db: Kysely<DB>, p: P, d: SqlDialect) => Compilable<unknown>;

/** A statement written once; each engine compiles it on first use and keeps it. */
export class Query<P extends object, R> {
  declare readonly row: R;
  constructor(readonly build: Build<P>) {}
}

/** Any statement, whatever its arguments. */
export type AnyQuery = Query<never, unknown>;

type Row<C> = C extends Compilable<infer R> ? R : never;

export function query<P extends object = Record<string, never>>() {
  return <B extends (db: Kysely<DB>, p: P, d: SqlDialect) => Compilable<unknown>>(build: B) =>
    new Query<P, Row<ReturnType<B>>>(build as Build<P>);
}

let names = 0;

/** Compiles statements for one engine, each once; binds each Slot by name at each call. */
export function compiler(parts: KyselyParts, dialect: SqlDialect): (q: AnyQuery) => Compiled {
  const db = new Kysely<DB>({
    dialect: {
      createAdapter: () => parts.adapter,
      createDriver: () => new DummyDriver(),
      createIntrospector: parts.introspector,
      createQueryCompiler: parts.queryCompiler,
    },
  });
  const cache = new Map<AnyQuery, Compiled>();
  return (q) => {
    let c = cache.get(q);
    if (c === undefined) {
      const compiled = q.build(db, slots<never>(), dialect).compile();
      const picks = compiled.parameters.map((v) => (v instanceof Slot ? v.pick : () => v)) as ((args: object) => unknown)[];
      c = { sql: compiled.sql, name: `gamehost-${++names}`, bind: (args) => picks.map((pick) => pick(args)) };
      cache.set(q, c);
    }
    return c;
  };
}

/** An argument as the engine takes it (a list or an object as JSON text, say). */
export function mapSlot<T, U>(slot: T, f: (value: T) => U): U {
  return new Slot((args: never) => f((slot as Slot).pick(args) as T)) as U;
}

/** Statements run on one connection, in a transaction or not. */
export interface Connection {
  all<P extends object, R>(q: Query<P, R>, args: P): Promise<R[]>;
  /** Answers how many rows the statement changed. */
  run<P extends object>(q: Query<P, unknown>, args: P): Promise<number>;
}

/** One engine: its connections, transactions and locks. */
export interface SqlEngine extends Connection {
  /** `body` in one transaction that writes (SQLite takes its write lock at BEGIN): committed unless it throws. */
  transaction<T>(body: (c: Connection) => Promise<T>): Promise<T>;
  /** Serialises the finds of one namespace until the transaction ends (SQLite's write lock already does). */
  lockFinds(c: Connection, namespaceId: string): Promise<void>;
  /** Inserts a stream's rows of lines (one statement where the engine takes arrays). */
  insertLines(c: Connection, lobbyId: string, stream: LogStream, chunks: LogChunk[]): Promise<void>;
  /** Log bytes an append dropped, for an engine that reclaims their space itself; an append waits for it. */
  droppedLogs(bytes: number): Promise<void>;
  close(): Promise<void>;
}

// --- the statements, by table ------------------------------------------------------------------------------------

/** The named fields of a row argument, as the values an insert writes (the table's defaults fill the others). */
const fields = <T, K extends keyof T>(p: T, columns: readonly K[]) => Object.fromEntries(columns.map((c) => [c, p[c]])) as unknown as T;
const ONE = sql.lit(1).as('x');

const GET_LOBBY = query<{ id: string }>()((db, p) => db.selectFrom('lobbies').selectAll().where('lobby_id', '=', p.id));
// The row lock serialises joins to one lobby (and a find's choice of it); other lobbies go on.
const LOCK_LOBBY = query<{ id: string }>()((db, p, d) => d.forUpdate(db.selectFrom('lobbies').selectAll().where('lobby_id', '=', p.id)));
const INSERT_LOBBY = query<LobbyRow>()((db, p) => db.insertInto('lobbies').values(fields(p, LOBBY_INSERT_COLUMNS.split(', ') as (keyof LobbyRow)[])));
type PlayerValues = { id: string; lobby: string; now: number; ip: string; registerBy: number | null; connectTs: number | null };
const INSERT_PLAYER = query<PlayerValues>()((db, p) =>
  db.insertInto('players').values({
    player_id: p.id, lobby_id: p.lobby, create_ts: p.now, source_ip: p.ip, register_by_ts: p.registerBy, connect_ts: p.connectTs, remove_ts: null,
  }),
);
// A new lobby's first player, inserted only while its namespace runs at most `max` lobbies, the new one counted (schema
// 16's trigger ran at its insert), and (`seen`, unless null) while the namespace's row is still the one the lobby was
// made from (store.ts namespaceStamp, written here in SQL): no row inserted, one of the two is not so. The checks cost
// no statement of their own, which a create on PostgreSQL pays a round trip for each.
const int8 = (value: number | null) => sql<number>`cast(${value} as bigint)`;
const STAMP = sql<string>`coalesce((select version_id || '|' || cast(lobby_count_max as text) || '|' || coalesce(cast(max_players_per_client as text), '')
  from namespaces where namespaces.namespace_id = running_lobbies.namespace_id), '')`;
const INSERT_PLAYER_WITHIN = query<PlayerValues & { ns: string; max: number; seen: string | null }>()((db, p) =>
  db.insertInto('players')
    .columns(['player_id', 'lobby_id', 'create_ts', 'source_ip', 'register_by_ts', 'connect_ts', 'remove_ts'])
    .expression(
      db.selectFrom('running_lobbies')
        .select([
          sql<string>`${p.id}`.as('player_id'), sql<string>`${p.lobby}`.as('lobby_id'), int8(p.now).as('create_ts'), sql<string>`${p.ip}`.as('source_ip'),
          int8(p.registerBy).as('register_by_ts'), int8(p.connectTs).as('connect_ts'), int8(null).as('remove_ts'),
        ])
        .where('namespace_id', '=', p.ns).where('lobby_count', '<=', p.max)
        .where(sql<boolean>`(cast(${p.seen} as text) is null or ${STAMP} = ${p.seen})`),
    ),
);
const ENTER_LOBBY = query<{ id: string; idle: number | null }>()((db, p) =>
  db.updateTable('lobbies')
    .set((eb) => ({ player_count: eb('player_count', '+', 1), idle_stop_ts: eb.fn.coalesce(eb.val(p.idle), 'idle_stop_ts'), idle_ts: null }))
    .where('lobby_id', '=', p.id),
);
const LEAVE_LOBBY = query<{ id: string; n: number }>()((db, p) =>
  db.updateTable('lobbies').set((eb) => ({ player_count: eb('player_count', '-', p.n) })).where('lobby_id', '=', p.id),
);
const STOP_IF_EMPTY = query<{ id: string; now: number }>()((db, p) =>
  db.updateTable('lobbies').set({ stop_ts: p.now, exit_code: 0, failed: 0 }).where('lobby_id', '=', p.id).where('stop_ts', 'is', null).where('player_count', '<=', 0),
);
// Production's per-client count: the source's players of the namespace not yet removed, pending or connected.
const PLAYERS_FROM_SOURCE = query<{ ip: string; ns: string }>()((db, p) =>
  db.selectFrom('players as players_source').innerJoin('lobbies as l', 'l.lobby_id', 'players_source.lobby_id')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('players_source.source_ip', '=', p.ip)
    .where('players_source.remove_ts', 'is', null).where('l.namespace_id', '=', p.ns).where('l.stop_ts', 'is', null),
);
// The namespace's running lobbies, as the triggers of schema 16 keep them (no row: none yet).
const RUNNING_LOBBIES = query<{ ns: string }>()((db, p) =>
  db.selectFrom('running_lobbies').select((eb) => eb.fn.coalesce(eb.fn.max('lobby_count'), eb.lit(0)).as('n')).where('namespace_id', '=', p.ns),
);

// A lobby its last player left stops, unless its version keeps idle lobbies of its game mode in its region.
const STOP_EMPTIED = query<{ id: string; now: number }>()((db, p) =>
  db.updateTable('lobbies').set({ stop_ts: p.now, exit_code: 0, failed: 0 }).where('lobby_id', '=', p.id).where('stop_ts', 'is', null)
    .where('player_count', '<=', 0).where('idle_max', '<=', 0),
);
// Else it is idle from now (an idle one keeps the time it became so).
const MARK_IDLE = query<{ id: string; now: number }>()((db, p) =>
  db.updateTable('lobbies').set({ idle_ts: p.now }).where('lobby_id', '=', p.id).where('stop_ts', 'is', null).where('player_count', '<=', 0).where('idle_ts', 'is', null),
);
// The idle lobbies of a key, longest idle first.
const IDLE_OF = query<IdleKey>()((db, p, d) =>
  db.selectFrom('lobbies as lobbies_running_mode').select('lobby_id')
    .where('namespace_id', '=', p.namespace_id).where('version_id', '=', p.version_id).where('game_mode', '=', p.game_mode).where('region_id', '=', p.region_id)
    .where('stop_ts', 'is', null).where('player_count', '<=', 0)
    .orderBy((eb) => eb.fn.coalesce('idle_ts', 'create_ts')).orderBy('create_ts').orderBy(d.binary('lobby_id')),
);
// What a deploy does to the occupied lobbies of older versions: they stop once they empty.
const KEEP_NO_IDLE = query<{ ns: string; version: string }>()((db, p) =>
  db.updateTable('lobbies').set({ idle_max: 0 }).where('namespace_id', '=', p.ns).where('stop_ts', 'is', null).where('version_id', '<>', p.version).where('idle_max', '>', 0),
);

// A deploy's outdated idle lobbies: running, empty, of another version.
const IDLE_OUTDATED = query<{ ns: string; version: string }>()((db, p) =>
  db.selectFrom('lobbies').select('lobby_id').where('namespace_id', '=', p.ns).where('stop_ts', 'is', null)
    .where('player_count', '<=', 0).where('version_id', '<>', p.version),
);

// What time decides (expireIdle). Each kind is looked for before anything is written: the common case writes nothing.
const dueNow = (db: Kysely<DB>, now: number) =>
  db.selectNoFrom((eb) => [
    eb.exists(eb.selectFrom('lobbies').select(ONE).where('stop_ts', 'is', null).where('idle_stop_ts', 'is not', null).where('idle_stop_ts', '<=', now))
      .$castTo<SqlBool>().as('idle'),
    eb.exists(eb.selectFrom('lobbies').select(ONE).where('stop_ts', 'is', null).where('ready_deadline_ts', 'is not', null).where('ready_deadline_ts', '<=', now))
      .$castTo<SqlBool>().as('ready'),
    eb.exists(eb.selectFrom('players').select(ONE).where('connect_ts', 'is', null).where('remove_ts', 'is', null).where('register_by_ts', '<=', now))
      .$castTo<SqlBool>().as('players'),
  ]);
const DUE = query<{ now: number }>()((db, p) => dueNow(db, p.now));
// The lobby with DUE's answer, in one round trip.
const CURRENT_LOBBY = query<{ id: string; now: number }>()((db, p) =>
  db.selectFrom(dueNow(db, p.now).as('due')).leftJoin('lobbies', (join) => join.on('lobbies.lobby_id', '=', p.id))
    .selectAll('lobbies').select(['due.idle', 'due.ready', 'due.players']),
);
// An idle lobby stops at its idle deadline, not when someone happens to look, so every reader agrees.
const STOP_IDLE = query<{ now: number }>()((db, p) =>
  db.updateTable('lobbies').set((eb) => ({ stop_ts: eb.ref('idle_stop_ts'), exit_code: 0, failed: 0 }))
    .where('stop_ts', 'is', null).where('idle_stop_ts', 'is not', null).where('idle_stop_ts', '<=', p.now),
);
const STOP_UNREADY = query<{ now: number }>()((db, p) =>
  db.updateTable('lobbies').set((eb) => ({ stop_ts: eb.ref('ready_deadline_ts'), exit_code: 0, failed: 1 }))
    .where('stop_ts', 'is', null).where('ready_deadline_ts', 'is not', null).where('ready_deadline_ts', '<=', p.now),
);
// The lobbies of the pending players past their time, locked in one order before those players are: as a stop
// takes a lobby, then (its trigger) its players. Taking the players first deadlocked with a stop on PostgreSQL.
const LOCK_EXPIRING = query<{ now: number }>()((db, p, d) =>
  d.forUpdate(
    db.selectFrom('lobbies').select('lobby_id')
      .where('lobby_id', 'in', db.selectFrom('players').select('lobby_id').where('connect_ts', 'is', null).where('remove_ts', 'is', null).where('register_by_ts', '<=', p.now))
      .orderBy('lobby_id'),
  ),
);
// Each pending player past its time is removed by one caller (the condition), at that time.
const REMOVE_EXPIRED = query<{ now: number }>()((db, p) =>
  db.updateTable('players').set((eb) => ({ remove_ts: eb.ref('register_by_ts') }))
    .where('connect_ts', 'is', null).where('remove_ts', 'is', null).where('register_by_ts', '<=', p.now).returning(['lobby_id', 'register_by_ts']),
);

const MARK_READY = query<{ id: string; now: number }>()((db, p) =>
  db.updateTable('lobbies')
    .set((eb) => ({
      start_ts: eb.case().when('start_ts', '<', p.now).then(eb.ref('start_ts')).else(p.now).end(),
      ready_ts: p.now,
      ready_deadline_ts: null,
      idle_stop_ts: eb.case().when('idle_lifetime_ms', 'is', null).then(null).else(eb(eb.val(p.now), '+', eb.ref('idle_lifetime_ms'))).end(),
    }))
    .where('lobby_id', '=', p.id).where('stop_ts', 'is', null).where('ready_ts', '>', p.now),
);
const RESTART_REGISTRATION = query<{ id: string; by: number }>()((db, p) =>
  db.updateTable('players').set({ register_by_ts: p.by }).where('lobby_id', '=', p.id).where('connect_ts', 'is', null).where('remove_ts', 'is', null),
);
const SET_CLOSED = query<{ id: string; closed: number }>()((db, p) => db.updateTable('lobbies').set({ is_closed: p.closed }).where('lobby_id', '=', p.id));
const SET_STATE = query<{ id: string; state: string | null }>()((db, p) => db.updateTable('lobbies').set({ state: p.state }).where('lobby_id', '=', p.id));
const SET_SERVER = query<{ id: string; pid: number; start: number }>()((db, p) =>
  db.updateTable('lobbies').set({ server_pid: p.pid, server_start: p.start }).where('lobby_id', '=', p.id),
);
const SET_READY_DEADLINE = query<{ id: string; deadline: number | null }>()((db, p) =>
  db.updateTable('lobbies').set({ ready_deadline_ts: p.deadline }).where('lobby_id', '=', p.id).where('stop_ts', 'is', null).where('ready_ts', '=', NOT_READY),
);
const STOP_LOBBY = query<{ id: string; stop: number; exit: number; failed: number }>()((db, p) =>
  db.updateTable('lobbies').set({ stop_ts: p.stop, exit_code: p.exit, failed: p.failed }).where('lobby_id', '=', p.id).where('stop_ts', 'is', null),
);
const LIST_LOBBIES = query<{ ns: string }>()((db, p, d) =>
  db.selectFrom('lobbies as lobbies_running_mode').selectAll('lobbies_running_mode')
    .select((eb) =>
      eb.selectFrom('players as pl').select(eb.fn.countAll<number>().as('n')).whereRef('pl.lobby_id', '=', 'lobbies_running_mode.lobby_id')
        .where('pl.connect_ts', 'is not', null).where('pl.remove_ts', 'is', null).as('connected'),
    )
    .where('lobbies_running_mode.namespace_id', '=', p.ns).where('lobbies_running_mode.stop_ts', 'is', null).where('lobbies_running_mode.publicity', '=', sql.lit('public'))
    .orderBy('lobbies_running_mode.create_ts').orderBy(d.binary('lobbies_running_mode.lobby_id')),
);
const OWNED_LOBBIES = query<{ owner: string }>()((db, p, d) =>
  db.selectFrom('lobbies as lobbies_owner').selectAll().where('owner', '=', p.owner).where('stop_ts', 'is', null).where('owner', 'is not', null)
    .orderBy('create_ts').orderBy(d.binary('lobby_id')),
);
// The production export query (stopped in the window, created in it, or running and created before its end), a page
// from a cursor: lobbies_history is walked in its order from there. Each lobby alive in the window was created by its
// end, which bounds the walk's start.
const HISTORY = query<{ ns: string; qs: number; qe: number; ts: number; id: string; limit: number }>()((db, p, d) =>
  db.selectFrom('lobbies').selectAll().where('namespace_id', '=', p.ns)
    .where('create_ts', '<=', p.qe)
    .where('create_ts', '<=', p.ts)
    .where((eb) => eb.or([eb('create_ts', '<', p.ts), eb(d.binary('lobby_id'), '>', p.id)]))
    .where((eb) =>
      eb.or([
        eb.and([eb('stop_ts', '>', p.qs), eb('stop_ts', '<=', p.qe)]),
        eb.and([eb('create_ts', '>', p.qs), eb('create_ts', '<=', p.qe)]),
        eb.and([eb('stop_ts', 'is', null), eb('create_ts', '<=', p.qe)]),
      ]),
    )
    .orderBy('create_ts', 'desc').orderBy(d.binary('lobby_id')).limit(p.limit),
);
// A few rows kept by triggers, however many lobbies run.
const PLAYER_COUNTS = query<{ ns: string }>()((db, p) =>
  db.selectFrom('running_players').select(['game_mode', 'region_id', 'player_count']).where('namespace_id', '=', p.ns).where('player_count', '>', 0),
);

const PLAYER_COLUMNS = ['player_id', 'lobby_id', 'create_ts', 'register_by_ts', 'connect_ts', 'remove_ts'] as const;
const GET_PLAYER = query<{ id: string }>()((db, p) => db.selectFrom('players').select(PLAYER_COLUMNS).where('player_id', '=', p.id));
// The player's row lock: of two servers presenting one token at once, one connects it.
const LOCK_PLAYER = query<{ id: string }>()((db, p, d) => d.forUpdate(db.selectFrom('players').select(PLAYER_COLUMNS).where('player_id', '=', p.id)));
const CONNECT_PLAYER = query<{ id: string; now: number }>()((db, p) => db.updateTable('players').set({ connect_ts: p.now }).where('player_id', '=', p.id));
const REMOVE_PLAYER = query<{ id: string; now: number }>()((db, p) =>
  db.updateTable('players').set({ remove_ts: p.now }).where('player_id', '=', p.id).where('remove_ts', 'is', null),
);

const TOUCH_REPLICA = query<{ replica: string; now: number }>()((db, p) =>
  db.insertInto('replicas').values({ replica: p.replica, seen_ts: p.now }).onConflict((oc) =>
    oc.column('replica').doUpdateSet((eb) => ({
      seen_ts: eb.case().when('replicas.seen_ts', '>', eb.ref('excluded.seen_ts')).then(eb.ref('replicas.seen_ts')).else(eb.ref('excluded.seen_ts')).end(),
    })),
  ),
);
const REPLICA_SEEN = query<{ replica: string }>()((db, p) => db.selectFrom('replicas').select('seen_ts').where('replica', '=', p.replica));
const SET_SAMPLES = query<{ id: string; samples: string }>()((db, p) =>
  db.insertInto('lobby_samples').values({ lobby_id: p.id, samples: p.samples }).onConflict((oc) => oc.column('lobby_id').doUpdateSet((eb) => ({ samples: eb.ref('excluded.samples') }))),
);
const SAMPLES = query<{ id: string }>()((db, p) => db.selectFrom('lobby_samples').select('samples').where('lobby_id', '=', p.id));

// The unique (game_id, image_tag) decides: a taken tag inserts nothing.
const INSERT_BUILD = query<BuildRow>()((db, p) =>
  db.insertInto('builds')
    .values(fields(p, ['build_id', 'game_id', 'upload_id', 'display_name', 'image_tag', 'kind', 'compression', 'path', 'content_type', 'content_length', 'create_ts']))
    .onConflict((oc) => oc.columns(['game_id', 'image_tag']).doNothing()),
);
const INSERT_UPLOAD = query<NewUpload>()((db, p) =>
  db.insertInto('uploads').values(fields(p, ['upload_id', 'build_id', 'content_length', 'part_size', 'part_count']) as DB['uploads']),
);
const GET_UPLOAD = query<{ id: string }>()((db, p) =>
  db.selectFrom('uploads as u').innerJoin('builds as b', 'b.build_id', 'u.build_id')
    .select(['u.upload_id', 'u.build_id', 'b.game_id', 'u.content_length', 'u.part_size', 'u.part_count', 'u.state', 'u.claim_ts']).where('u.upload_id', '=', p.id),
);
// One conditional UPDATE: of any number of callers claiming at once, exactly one changes the row.
const CLAIM_UPLOAD = query<{ id: string; now: number; staleBefore: number }>()((db, p) =>
  db.updateTable('uploads').set({ state: 'assembling', claim_ts: p.now }).where('upload_id', '=', p.id)
    .where((eb) => eb.or([eb('state', '=', 'pending'), eb.and([eb('state', '=', 'assembling'), eb('claim_ts', '<', p.staleBefore)])])),
);
const TOUCH_CLAIM = query<{ id: string; now: number }>()((db, p) =>
  db.updateTable('uploads').set({ claim_ts: p.now }).where('upload_id', '=', p.id).where('state', '=', 'assembling'),
);
const RELEASE_UPLOAD = query<{ id: string }>()((db, p) =>
  db.updateTable('uploads').set({ state: 'pending', claim_ts: null }).where('upload_id', '=', p.id).where('state', '=', 'assembling'),
);
const COMPLETE_UPLOAD = query<{ id: string }>()((db, p) => db.updateTable('uploads').set({ state: 'complete' }).where('upload_id', '=', p.id));
const COMPLETE_BUILD = query<{ id: string; sha256: string; size: number; now: number }>()((db, p) =>
  db.updateTable('builds').set({ sha256: p.sha256, content_length: p.size, complete: 1, complete_ts: p.now }).where('build_id', '=', p.id),
);
const LIST_BUILDS = query<{ game: string }>()((db, p, d) =>
  db.selectFrom('builds').selectAll().where('game_id', '=', p.game).orderBy('create_ts', 'desc').orderBy(d.binary('build_id')),
);
const GET_BUILD = query<{ id: string }>()((db, p) => db.selectFrom('builds').selectAll().where('build_id', '=', p.id));
const BUILD_TAGGED = query<{ game: string; tag: string }>()((db, p) => db.selectFrom('builds').selectAll().where('game_id', '=', p.game).where('image_tag', '=', p.tag));
// builds_newest (schema 21) in its order: the walk ends at the first complete build.
const NEWEST_COMPLETE = query<{ game: string }>()((db, p, d) =>
  db.selectFrom('builds').selectAll().where('game_id', '=', p.game).where('complete', '=', 1).orderBy('create_ts', 'desc').orderBy(d.binary('build_id')).limit(1),
);
const BUILD_OBJECT = ['game_id', 'build_id', 'upload_id'] as const;
// The row locked first: of two deletes of one build, one answers it and the other nothing.
const LOCK_BUILD = query<{ id: string }>()((db, p, d) => d.forUpdate(db.selectFrom('builds').select(BUILD_OBJECT).where('build_id', '=', p.id)));
const DELETE_PARTS = query<{ upload: string }>()((db, p) => db.deleteFrom('upload_parts').where('upload_id', '=', p.upload));
const DELETE_UPLOAD = query<{ id: string }>()((db, p) => db.deleteFrom('uploads').where('build_id', '=', p.id));
const DELETE_BUILD = query<{ id: string }>()((db, p) => db.deleteFrom('builds').where('build_id', '=', p.id));
const STALE_UPLOADS = query<{ before: number }>()((db, p) =>
  db.selectFrom('builds').select(BUILD_OBJECT).where('complete', '=', sql.lit(0)).where('create_ts', '<', p.before),
);
const RECORD_PART = query<{ id: string; part: number; size: number; sha256: string; stamp: string; now: number }>()((db, p) =>
  db.insertInto('upload_parts').values({ upload_id: p.id, part_number: p.part, size: p.size, sha256: p.sha256, stamp: p.stamp, update_ts: p.now }).onConflict((oc) =>
    oc.columns(['upload_id', 'part_number']).doUpdateSet((eb) => ({
      size: eb.ref('excluded.size'), sha256: eb.ref('excluded.sha256'), stamp: eb.ref('excluded.stamp'), update_ts: eb.ref('excluded.update_ts'),
    })),
  ),
);
const LIST_PARTS = query<{ id: string }>()((db, p) =>
  db.selectFrom('upload_parts').select(['part_number', 'size', 'sha256', 'stamp']).where('upload_id', '=', p.id).orderBy('part_number'),
);

const PRUNE_EXPORTS = query<{ now: number }>()((db, p) => db.deleteFrom('exports').where('expires_ts', '<', p.now));
// An export of the same id (a lobby stream's: one file each) replaces the last.
const INSERT_EXPORT = query<{ id: string; game: string; csv: string; now: number; expires: number }>()((db, p) =>
  db.insertInto('exports').values({ export_id: p.id, game_id: p.game, csv: p.csv, create_ts: p.now, expires_ts: p.expires }).onConflict((oc) =>
    oc.column('export_id').doUpdateSet((eb) => ({ csv: eb.ref('excluded.csv'), create_ts: eb.ref('excluded.create_ts'), expires_ts: eb.ref('excluded.expires_ts') })),
  ),
);
const GET_EXPORT = query<{ id: string }>()((db, p) => db.selectFrom('exports').select(['csv', 'expires_ts']).where('export_id', '=', p.id));

const INSERT_GAME = query<GameRow>()((db, p) =>
  db.insertInto('games').values(fields(p, ['game_id', 'namespace_id', 'name', 'game_modes', 'regions', 'create_ts', 'expire_ts'])),
);
const INSERT_VERSION = query<VersionRow>()((db, p) =>
  db.insertInto('versions').values(fields(p, ['version_id', 'game_id', 'display_name', 'config', 'create_ts'])).onConflict((oc) => oc.doNothing()),
);
const GET_VERSION = query<{ id: string }>()((db, p) => db.selectFrom('versions').selectAll().where('version_id', '=', p.id));
const VERSION_NAMED = query<{ game: string; name: string }>()((db, p) =>
  db.selectFrom('versions').select('version_id').where('game_id', '=', p.game).where('display_name', '=', p.name),
);
// Without their configs: a game's list reads all of its versions.
const LIST_VERSIONS = query<{ game: string }>()((db, p, d) =>
  db.selectFrom('versions').select(['version_id', 'game_id', 'display_name', 'create_ts']).where('game_id', '=', p.game).orderBy('create_ts').orderBy(d.binary('version_id')),
);
const RESERVE_NAME = query<{ game: string; day: string }>()((db, p) =>
  db
    .insertInto('version_names')
    .values({ game_id: p.game, day: p.day, n: 1 })
    .onConflict((oc) => oc.columns(['game_id', 'day']).doUpdateSet((eb) => ({ n: eb('version_names.n', '+', 1) })))
    .returning('n'),
);
const NAMESPACE_COLUMNS = ['namespace_id', 'game_id', 'name_id', 'display_name', 'version_id', 'create_ts', 'lobby_count_max', 'max_players_per_client'] as const;
const INSERT_NAMESPACE = query<NamespaceRow>()((db, p) => db.insertInto('namespaces').values(fields(p, NAMESPACE_COLUMNS)).onConflict((oc) => oc.doNothing()));
const PUT_NAMESPACE = query<NamespaceRow>()((db, p) =>
  db.insertInto('namespaces').values(fields(p, NAMESPACE_COLUMNS)).onConflict((oc) =>
    oc.column('namespace_id').doUpdateSet((eb) => ({
      display_name: eb.ref('excluded.display_name'),
      version_id: eb.ref('excluded.version_id'),
      lobby_count_max: eb.ref('excluded.lobby_count_max'),
      max_players_per_client: eb.ref('excluded.max_players_per_client'),
    })),
  ),
);
const GET_NAMESPACE = query<{ id: string }>()((db, p) => db.selectFrom('namespaces').selectAll().where('namespace_id', '=', p.id));
const LOCK_NAMESPACE = query<{ id: string }>()((db, p, d) => d.forUpdate(db.selectFrom('namespaces').select('version_id').where('namespace_id', '=', p.id)));
const LIST_NAMESPACES = query<{ game: string }>()((db, p, d) => db.selectFrom('namespaces').selectAll().where('game_id', '=', p.game).orderBy('create_ts').orderBy(d.binary('namespace_id')));
// The namespace's row is written (and, on PostgreSQL, locked) first, so deploys to one namespace take turns for seq.
const APPEND_DEPLOY = query<NamespaceVersionRow>()((db, p) =>
  db.insertInto('namespace_versions').columns(['namespace_id', 'seq', 'version_id', 'deploy_ts']).expression(
    db.selectFrom('namespace_versions')
      .select((eb) => [eb.val(p.namespace_id).as('namespace_id'), eb(eb.fn.coalesce(eb.fn.max('seq'), eb.lit(0)), '+', 1).as('seq'), eb.val(p.version_id).as('version_id'), eb.val(p.deploy_ts).as('deploy_ts')])
      .where('namespace_id', '=', p.namespace_id),
  ),
);
const NAMESPACE_HISTORY = query<{ id: string; limit: number }>()((db, p) =>
  db.selectFrom('namespace_versions').select(['namespace_id', 'version_id', 'deploy_ts']).where('namespace_id', '=', p.id).orderBy('seq', 'desc').limit(p.limit),
);
const GET_GAME = query<{ id: string }>()((db, p) => db.selectFrom('games').selectAll().where('game_id', '=', p.id));
const LIST_GAMES = query()((db, _p, d) => db.selectFrom('games').selectAll().where('delete_ts', 'is', null).orderBy('create_ts').orderBy(d.binary('game_id')));
const CLAIM_GAME = query<{ id: string; now: number }>()((db, p) =>
  db.updateTable('games').set({ delete_ts: p.now }).where('game_id', '=', p.id).where('delete_ts', 'is', null),
);
// A caller that waited on another's row lock finds the condition no longer holds: each game is claimed by one.
const CLAIM_EXPIRED = query<{ now: number }>()((db, p) =>
  db.updateTable('games').set({ delete_ts: p.now }).where('delete_ts', 'is', null).where('expire_ts', '<=', p.now).returning('game_id'),
);
const CLAIM_STALE = query<{ now: number; before: number }>()((db, p) =>
  db.updateTable('games').set({ delete_ts: p.now }).where('delete_ts', 'is not', null).where('delete_ts', '<', p.before).returning('game_id'),
);
const GAME_BUILDS = query<{ game: string }>()((db, p) => db.selectFrom('builds').select(['build_id', 'upload_id']).where('game_id', '=', p.game));
const GAME_EXPORTS = query<{ game: string }>()((db, p) => db.selectFrom('exports').select('export_id').where('game_id', '=', p.game));
// A game's records, children before parents (the foreign keys); the lobbies' output first, while their rows say
// which namespace they were in.
const OUTPUT_TABLES = ['lobby_logs', 'lobby_log_streams', 'lobby_samples'] as const;
const inNamespace = (db: Kysely<DB>, ns: string) => db.selectFrom('lobbies').select('lobby_id').where('namespace_id', '=', ns);
const ofGame = (db: Kysely<DB>, game: string) => db.selectFrom('builds').where('game_id', '=', game);
const PURGE_BY_NAMESPACE = [
  ...OUTPUT_TABLES.map((t) => query<{ ns: string }>()((db, p) => db.deleteFrom(t).where('lobby_id', 'in', inNamespace(db, p.ns)))),
  query<{ ns: string }>()((db, p) => db.deleteFrom('players').where('lobby_id', 'in', inNamespace(db, p.ns))),
  query<{ ns: string }>()((db, p) => db.deleteFrom('lobbies').where('namespace_id', '=', p.ns)),
];
const PURGE_BY_GAME = [
  query<{ game: string }>()((db, p) =>
    db.deleteFrom('namespace_versions').where('namespace_id', 'in', db.selectFrom('namespaces').select('namespace_id').where('game_id', '=', p.game)),
  ),
  query<{ game: string }>()((db, p) => db.deleteFrom('namespaces').where('game_id', '=', p.game)),
  query<{ game: string }>()((db, p) => db.deleteFrom('versions').where('game_id', '=', p.game)),
  query<{ game: string }>()((db, p) => db.deleteFrom('version_names').where('game_id', '=', p.game)),
  query<{ game: string }>()((db, p) => db.deleteFrom('upload_parts').where('upload_id', 'in', ofGame(db, p.game).select('upload_id'))),
  query<{ game: string }>()((db, p) => db.deleteFrom('uploads').where('build_id', 'in', ofGame(db, p.game).select('build_id'))),
  query<{ game: string }>()((db, p) => db.deleteFrom('builds').where('game_id', '=', p.game)),
  query<{ game: string }>()((db, p) => db.deleteFrom('exports').where('game_id', '=', p.game)),
];
const PURGE_GAME = query<{ game: string }>()((db, p) => db.deleteFrom('games').where('game_id', '=', p.game));

type StreamKey = { id: string; stream: LogStream };
const OPEN_STREAM = query<StreamKey>()((db, p) =>
  db.insertInto('lobby_log_streams').values({ lobby_id: p.id, stream: p.stream, last_ts: 0, line_count: 0, byte_count: 0 }).onConflict((oc) => oc.doNothing()),
);
// The stream's row, locked: appends to one stream take turns, so stamps never repeat or go back.
const LOCK_STREAM = query<StreamKey>()((db, p, d) =>
  d.forUpdate(db.selectFrom('lobby_log_streams').select(['last_ts', 'line_count', 'byte_count']).where('lobby_id', '=', p.id).where('stream', '=', p.stream)),
);
const PUT_STREAM = query<LogStreamState & StreamKey>()((db, p) =>
  db.updateTable('lobby_log_streams').set({ last_ts: p.last_ts, line_count: p.line_count, byte_count: p.byte_count })
    .where('lobby_id', '=', p.id).where('stream', '=', p.stream),
);
type ChunkRow = { ts: number; line: Buffer | Uint8Array; line_count: number; lengths: Buffer | Uint8Array | null };
export const INSERT_LINE = query<StreamKey & { ts: number; line: Buffer; line_count: number; lengths: Buffer | null }>()((db, p) =>
  db.insertInto('lobby_logs').values({ lobby_id: p.id, stream: p.stream, ts: p.ts, line: p.line, line_count: p.line_count, lengths: p.lengths }),
);
const lines = (db: Kysely<DB>, p: StreamKey) => db.selectFrom('lobby_logs').where('lobby_id', '=', p.id).where('stream', '=', p.stream);
const CHUNK = ['ts', 'line', 'line_count', 'lengths'] as const;
const OLDEST_LINES = query<StreamKey & { after: number; limit: number }>()((db, p, d) =>
  lines(db, p).select(['ts', 'line_count as lines', d.byteLength('line').as('n')]).where('ts', '>', p.after).orderBy('ts').limit(p.limit),
);
const CHUNK_AT = query<StreamKey & { ts: number }>()((db, p) => lines(db, p).select(CHUNK).where('ts', '=', p.ts));
const PUT_CHUNK = query<StreamKey & { ts: number; line: Buffer; line_count: number; lengths: Buffer | null }>()((db, p) =>
  db.updateTable('lobby_logs').set({ line: p.line, line_count: p.line_count, lengths: p.lengths })
    .where('lobby_id', '=', p.id).where('stream', '=', p.stream).where('ts', '=', p.ts),
);
const DROP_LINES = query<StreamKey & { cutoff: number }>()((db, p) =>
  db.deleteFrom('lobby_logs').where('lobby_id', '=', p.id).where('stream', '=', p.stream).where('ts', '<=', p.cutoff),
);
// A row holds one line at least, so `limit` rows hold the lines asked for.
const RECENT_LINES = query<StreamKey & { limit: number }>()((db, p) =>
  db.selectFrom(lines(db, p).select(CHUNK).orderBy('ts', 'desc').limit(p.limit).as('recent')).select(CHUNK).orderBy('ts'),
);
const LINES_AFTER = query<StreamKey & { after: number; limit: number }>()((db, p) =>
  lines(db, p).select(CHUNK).where('ts', '>', p.after).orderBy('ts').limit(p.limit),
);
const bytes = (b: Buffer | Uint8Array) => (Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength));
const toChunk = (r: ChunkRow): LogChunk => ({ ts: Number(r.ts), count: r.line_count, bytes: bytes(r.line), lengths: r.lengths === null ? null : bytes(r.lengths) });
// Walked from the output (running lobbies' and those stopped since the last sweep), each lobby's stop read by its key
// (no index holds the stop times): as a join, PostgreSQL drove it from a scan of every lobby (26 ms at 50,000).
const STOPPED_WITH_OUTPUT = query<{ before: number; limit: number }>()((db, p) =>
  db.selectFrom(db.selectFrom('lobby_log_streams').select('lobby_id').union(db.selectFrom('lobby_samples').select('lobby_id')).as('o'))
    .select('o.lobby_id')
    .where((eb) => eb(eb.selectFrom('lobbies as l').select('l.stop_ts').whereRef('l.lobby_id', '=', 'o.lobby_id'), '<', p.before))
    .limit(p.limit),
);
const DROP_OUTPUT = OUTPUT_TABLES.map((t) => query<{ id: string }>()((db, p) => db.deleteFrom(t).where('lobby_id', '=', p.id)));
// Reads the stored data, so a database that is gone fails here.
const PING = query()((db) => db.selectFrom('meta').select((eb) => eb.fn.countAll<number>().as('n')));

type FindArgs = { ns: string; version: string; modes: string[]; regions: string[]; mode: string; region: string; tags: Record<string, string>; served: number };
// The fullest running, open, public lobby of the query with room for one more, whose server (if any) is served.
// `one`: one game mode in one region (what most finds ask), matched by equality, so the engine reads lobbies_find in
// its order and stops at the first row; a list test (one statement for every list) made SQLite read and sort every
// running lobby of the namespace: 8 ms a find at 10,000 lobbies against 2.5 ms (bench/find.js).
const find = (one: boolean) =>
  query<FindArgs>()((db, p, d) =>
    db.selectFrom('lobbies as lobbies_find').selectAll()
      .where('namespace_id', '=', p.ns).where('version_id', '=', p.version)
      .where((eb) => (one ? eb.and([eb('game_mode', '=', p.mode), eb('region_id', '=', p.region)]) : eb.and([d.oneOf('game_mode', p.modes), d.oneOf('region_id', p.regions)])))
      .where('stop_ts', 'is', null).where('is_closed', '=', sql.lit(0)).where('publicity', '=', sql.lit('public'))
      .whereRef('player_count', '<', 'max_players').where(d.hasTags('tags', p.tags))
      .where((eb) =>
        eb.or([
          eb('owner', 'is', null),
          eb.exists(eb.selectFrom('replicas as r').select(ONE).whereRef('r.replica', '=', 'lobbies_find.owner').where('r.seen_ts', '>=', p.served)),
        ]),
      )
      .orderBy('player_count', 'desc').orderBy('create_ts').orderBy(d.binary('lobby_id')).limit(1),
  );
const FIND_ONE = find(true);
const FIND_ANY = find(false);

const idleKey = (k: IdleKey): IdleKey => ({ namespace_id: k.namespace_id, version_id: k.version_id, game_mode: k.game_mode, region_id: k.region_id });

/** What withinBound throws to roll a transaction back (bounded answers its refusal). */
const PAST_BOUND = new Error('past the namespace\'s lobby_count_max');

async function first<P extends object, R>(c: Connection, q: Query<P, R>, args: P): Promise<R | undefined> {
  return (await c.all(q, args))[0];
}

function playerValues(lobby: LobbyRow, player: NewPlayer, now: number): PlayerValues {
  const registerBy = player.connected ? null : Math.max(now, lobby.ready_ts) + player.registration_ms;
  return { id: player.player_id, lobby: lobby.lobby_id, now, ip: player.source_ip, registerBy, connectTs: player.connected ? now : null };
}

/** The Store over either engine: every method written once, its statements compiled once per engine. */
export class SqlStore implements Store, LocalObjectIndex {
  constructor(protected readonly engine: SqlEngine) {}

  private async write<P extends object>(q: Query<P, unknown>, args: P): Promise<void> {
    await this.engine.run(q, args);
  }

  /** Whether the statement changed a row: of callers racing on one conditional UPDATE, one did. */
  private async changed<P extends object>(q: Query<P, unknown>, args: P): Promise<boolean> {
    return (await this.engine.run(q, args)) === 1;
  }

  // The methods of one statement.
  readonly insertGame = (game: GameRow) => this.write(INSERT_GAME, game);
  // Read by key on every request, never cached: a deletion begun through another process or replica counts at once.
  readonly getGame = (gameId: string) => first(this.engine, GET_GAME, { id: gameId });
  readonly listGames = () => this.engine.all(LIST_GAMES, {});
  readonly insertVersion = (version: VersionRow) => this.changed(INSERT_VERSION, version);
  readonly getVersion = (versionId: string) => first(this.engine, GET_VERSION, { id: versionId });
  readonly listVersions = (gameId: string) => this.engine.all(LIST_VERSIONS, { game: gameId });
  readonly versionNamed = async (gameId: string, displayName: string) => (await first(this.engine, VERSION_NAMED, { game: gameId, name: displayName })) !== undefined;
  readonly insertNamespace = (namespace: NamespaceRow) => this.changed(INSERT_NAMESPACE, namespace);
  readonly putNamespace = (namespace: NamespaceRow) => this.write(PUT_NAMESPACE, namespace);
  readonly getNamespace = (namespaceId: string) => first(this.engine, GET_NAMESPACE, { id: namespaceId });
  readonly listNamespaces = (gameId: string) => this.engine.all(LIST_NAMESPACES, { game: gameId });
  readonly namespaceHistory = (namespaceId: string, limit: number) => this.engine.all(NAMESPACE_HISTORY, { id: namespaceId, limit });
  readonly reserveVersionName = async (gameId: string, day: string) => Number((await this.engine.all(RESERVE_NAME, { game: gameId, day }))[0]!.n);
  readonly claimGameDeletion = (gameId: string, now: number) => this.changed(CLAIM_GAME, { id: gameId, now });
  readonly setLobbyClosed = (lobbyId: string, closed: boolean) => this.write(SET_CLOSED, { id: lobbyId, closed: closed ? 1 : 0 });
  readonly setLobbyState = (lobbyId: string, state: string | null) => this.write(SET_STATE, { id: lobbyId, state });
  readonly getPlayer = (playerId: string): Promise<PlayerRow | undefined> => first(this.engine, GET_PLAYER, { id: playerId });
  readonly listLobbies = (namespaceId: string) => this.engine.all(LIST_LOBBIES, { ns: namespaceId }) as Promise<ListedLobby[]>;
  readonly getLobby = (lobbyId: string) => first(this.engine, GET_LOBBY, { id: lobbyId });
  readonly setLobbyServer = (lobbyId: string, pid: number, start: number) => this.write(SET_SERVER, { id: lobbyId, pid, start });
  readonly setReadyDeadline = (lobbyId: string, deadline: number | null) => this.write(SET_READY_DEADLINE, { id: lobbyId, deadline });
  readonly ownedLobbies = (owner: string) => this.engine.all(OWNED_LOBBIES, { owner });
  readonly touchReplica = (replica: string, now: number) => this.write(TOUCH_REPLICA, { replica, now });
  readonly replicaSeen = async (replica: string) => (await first(this.engine, REPLICA_SEEN, { replica }))?.seen_ts;
  readonly setLobbySamples = (lobbyId: string, samples: string) => this.write(SET_SAMPLES, { id: lobbyId, samples });
  readonly lobbySamples = async (lobbyId: string) => (await first(this.engine, SAMPLES, { id: lobbyId }))?.samples;
  // A transaction, run again when PostgreSQL rolls it back for a deadlock (its trigger takes the players' rows too).
  readonly stopLobby = (lobbyId: string, stopTs: number, exitCode: number, failed: boolean) =>
    this.engine.transaction(async (c) => (await c.run(STOP_LOBBY, { id: lobbyId, stop: stopTs, exit: exitCode, failed: failed ? 1 : 0 })) === 1);
  readonly playerCounts = (namespaceId: string) => this.engine.all(PLAYER_COUNTS, { ns: namespaceId });
  readonly lobbyHistory = (namespaceId: string, queryStart: number, queryEnd: number, limit: number, after: HistoryCursor = { create_ts: queryEnd, lobby_id: '' }) =>
    this.engine.all(HISTORY, { ns: namespaceId, qs: queryStart, qe: queryEnd, ts: after.create_ts, id: after.lobby_id, limit });
  readonly getUpload = (uploadId: string) => first(this.engine, GET_UPLOAD, { id: uploadId });
  readonly claimUpload = (uploadId: string, now: number, staleMs: number) => this.changed(CLAIM_UPLOAD, { id: uploadId, now, staleBefore: now - staleMs });
  readonly touchClaim = (uploadId: string, now: number) => this.write(TOUCH_CLAIM, { id: uploadId, now });
  readonly releaseUpload = (uploadId: string) => this.write(RELEASE_UPLOAD, { id: uploadId });
  readonly listBuilds = (gameId: string) => this.engine.all(LIST_BUILDS, { game: gameId });
  readonly getBuild = (buildId: string) => first(this.engine, GET_BUILD, { id: buildId });
  readonly buildTagged = (gameId: string, tag: string) => first(this.engine, BUILD_TAGGED, { game: gameId, tag });
  readonly newestCompleteBuild = (gameId: string) => first(this.engine, NEWEST_COMPLETE, { game: gameId });
  readonly staleUploads = (before: number) => this.engine.all(STALE_UPLOADS, { before });
  readonly recordPart = (uploadId: string, partNumber: number, size: number, sha256: string, stamp: string, now: number) =>
    this.write(RECORD_PART, { id: uploadId, part: partNumber, size, sha256, stamp, now });
  readonly listParts = (uploadId: string) => this.engine.all(LIST_PARTS, { id: uploadId });
  readonly getExport = (exportId: string) => first(this.engine, GET_EXPORT, { id: exportId });
  readonly ping = async () => void (await this.engine.all(PING, {}));
  readonly close = () => this.engine.close();

  /** What time decides, inside the caller's transaction, when anything is due. */
  private async expire(c: Connection, now: number): Promise<void> {
    const due = (await first(c, DUE, { now }))!;
    if (due.idle) await c.run(STOP_IDLE, { now });
    if (due.ready) await c.run(STOP_UNREADY, { now });
    if (!due.players) return;
    // A lobby (made by find or by create) stops once that leaves it empty, at the time its last player expired.
    const gone = new Map<string, { n: number; last: number }>();
    await c.all(LOCK_EXPIRING, { now });
    for (const p of await c.all(REMOVE_EXPIRED, { now })) {
      const lobby = gone.get(p.lobby_id) ?? { n: 0, last: 0 };
      gone.set(p.lobby_id, { n: lobby.n + 1, last: Math.max(lobby.last, p.register_by_ts!) });
    }
    for (const [id, { n, last }] of gone) {
      await c.run(LEAVE_LOBBY, { id, n });
      await this.emptied(c, id, last);
    }
  }

  /**
   * A lobby that may have lost its last player: it stops, or (its version keeping idle lobbies) stays up idle and the
   * longest-idle of its key beyond its idle_max stop. Not under the namespace's find lock (expiries of any namespace
   * run in any transaction): a race may leave one idle lobby too many, which the next idle update stops.
   */
  private async emptied(c: Connection, lobbyId: string, now: number): Promise<void> {
    if ((await c.run(STOP_EMPTIED, { id: lobbyId, now })) === 1) return;
    if ((await c.run(MARK_IDLE, { id: lobbyId, now })) === 0) return;
    const lobby = (await first(c, GET_LOBBY, { id: lobbyId }))!;
    await this.trim(c, lobby, lobby.idle_max, now);
  }

  /** Stops the longest-idle lobbies of the key beyond `max`, each by the conditional stop (a join may take one). */
  private async trim(c: Connection, key: IdleKey, max: number, now: number): Promise<string[]> {
    const idle = await c.all(IDLE_OF, idleKey(key));
    const stopped: string[] = [];
    for (const { lobby_id } of idle.slice(0, Math.max(0, idle.length - max)))
      if ((await c.run(STOP_IF_EMPTY, { id: lobby_id, now })) === 1) stopped.push(lobby_id);
    return stopped;
  }

  async playersFromSource(namespaceId: string, sourceIp: string, now: number): Promise<number> {
    await this.expireIdle(now);
    return Number((await first(this.engine, PLAYERS_FROM_SOURCE, { ip: sourceIp, ns: namespaceId }))!.n);
  }

  async idleCount(key: IdleKey, now: number): Promise<number> {
    await this.expireIdle(now);
    return (await this.engine.all(IDLE_OF, idleKey(key))).length;
  }

  async trimIdle(key: IdleKey, max: number, now: number): Promise<string[]> {
    return this.engine.transaction(async (c) => {
      await this.engine.lockFinds(c, key.namespace_id);
      await this.expire(c, now);
      return this.trim(c, key, max, now);
    });
  }

  async insertIdleLobby(lobby: LobbyRow, min: number, maxLobbies: number, now: number): Promise<IdleInsert> {
    return this.bounded(async (c): Promise<IdleInsert> => {
      // Under the find lock: of two replicas topping up one key at once, the second counts the first's lobbies.
      await this.engine.lockFinds(c, lobby.namespace_id);
      await this.expire(c, now);
      if ((await c.all(IDLE_OF, idleKey(lobby))).length >= min) return 'enough';
      await c.run(INSERT_LOBBY, { ...lobby, player_count: 0, idle_ts: lobby.create_ts });
      await this.withinBound(c, lobby.namespace_id, maxLobbies);
      return 'inserted';
    }, 'too_many_lobbies');
  }

  async expireIdle(now: number): Promise<void> {
    // Reading first keeps the common case (nothing due) off the write lock.
    const due = (await first(this.engine, DUE, { now }))!;
    if (due.idle || due.ready || due.players) await this.engine.transaction((c) => this.expire(c, now));
  }

  async currentLobby(lobbyId: string, now: number): Promise<LobbyRow | undefined> {
    const { idle, ready, players, ...lobby } = (await first(this.engine, CURRENT_LOBBY, { id: lobbyId, now }))!;
    if (!idle && !ready && !players) return lobby.lobby_id === null ? undefined : (lobby as LobbyRow);
    await this.engine.transaction((c) => this.expire(c, now));
    return this.getLobby(lobbyId);
  }

  private async tooManyFromSource(c: Connection, namespaceId: string, player: NewPlayer, limit: number | null): Promise<boolean> {
    if (limit === null || player.connected) return false;
    return Number((await first(c, PLAYERS_FROM_SOURCE, { ip: player.source_ip, ns: namespaceId }))!.n) >= limit;
  }

  /** Adds the player to a lobby whose row this transaction holds. */
  private async enter(c: Connection, lobby: LobbyRow, player: NewPlayer, now: number): Promise<LobbyRow> {
    await c.run(INSERT_PLAYER, playerValues(lobby, player, now));
    const idle = lobby.idle_lifetime_ms === null ? null : Math.max(lobby.ready_ts, now) + lobby.idle_lifetime_ms;
    await c.run(ENTER_LOBBY, { id: lobby.lobby_id, idle });
    return { ...lobby, player_count: lobby.player_count + 1, idle_stop_ts: idle ?? lobby.idle_stop_ts };
  }

  async stopIdleOutdated(namespaceId: string, versionId: string, now: number): Promise<string[]> {
    return this.engine.transaction(async (c) => {
      await this.expire(c, now);
      await c.run(KEEP_NO_IDLE, { ns: namespaceId, version: versionId });
      const stopped: string[] = [];
      // Each by the conditional stop, so a lobby a join took meanwhile (or another stop) is left as it is.
      for (const { lobby_id } of await c.all(IDLE_OUTDATED, { ns: namespaceId, version: versionId }))
        if ((await c.run(STOP_IF_EMPTY, { id: lobby_id, now })) === 1) stopped.push(lobby_id);
      return stopped;
    });
  }

  async insertLobby(lobby: LobbyRow, player: NewPlayer, maxLobbies?: number, seen?: string): Promise<boolean> {
    return this.bounded(async (c) => {
      await c.run(INSERT_LOBBY, { ...lobby, player_count: 1, idle_ts: null });
      await this.firstPlayer(c, lobby, player, lobby.create_ts, maxLobbies, seen);
      return true;
    }, false);
  }

  /**
   * `body` in a transaction, rolled back when a lobby it made took its namespace past a bound (withinBound):
   * then `refused`.
   */
  private async bounded<T>(body: (c: Connection) => Promise<T>, refused: T): Promise<T> {
    try {
      return await this.engine.transaction(body);
    } catch (err) {
      if (err === PAST_BOUND) return refused;
      throw err;
    }
  }

  /**
   * A new lobby's first player; with `maxLobbies`, throws PAST_BOUND (see withinBound) instead when past it, and with
   * `seen`, NamespaceChanged when the namespace's row is no longer that.
   */
  private async firstPlayer(c: Connection, lobby: LobbyRow, player: NewPlayer, now: number, maxLobbies?: number, seen?: string): Promise<void> {
    const values = playerValues(lobby, player, now);
    if (maxLobbies === undefined) await c.run(INSERT_PLAYER, values);
    else if ((await c.run(INSERT_PLAYER_WITHIN, { ...values, ns: lobby.namespace_id, max: maxLobbies, seen: seen ?? null })) === 0) {
      if (seen !== undefined && namespaceStamp(await first(c, GET_NAMESPACE, { id: lobby.namespace_id })) !== seen) throw new NamespaceChanged(lobby.namespace_id);
      throw PAST_BOUND;
    }
  }

  /**
   * Throws PAST_BOUND when the namespace runs more than `max` lobbies, counted after this transaction made its own:
   * the count (schema 16's trigger) is a row every insert of the namespace's lobbies updates, which PostgreSQL holds
   * for the transaction until it ends (SQLite's write lock holds everything), so creates, finds and idle top-ups
   * racing on any replica never pass the bound together, and none has to lock the namespace for it.
   */
  private async withinBound(c: Connection, namespaceId: string, max: number): Promise<void> {
    if ((await first(c, RUNNING_LOBBIES, { ns: namespaceId }))!.n > max) throw PAST_BOUND;
  }

  async joinLobby(lobbyId: string, player: NewPlayer, now: number, sourceLimit: number | null): Promise<JoinOutcome> {
    return this.engine.transaction(async (c): Promise<JoinOutcome> => {
      await this.expire(c, now);
      const lobby = await first(c, LOCK_LOBBY, { id: lobbyId });
      if (lobby === undefined) return { kind: 'not_found' };
      if (lobby.stop_ts !== null) return { kind: 'stopped', lobby };
      const players = lobby.player_count;
      if (players >= lobby.max_players_direct) return { kind: 'full', lobby, players };
      if (await this.tooManyFromSource(c, lobby.namespace_id, player, sourceLimit)) return { kind: 'too_many_from_source' };
      return { kind: 'joined', lobby: await this.enter(c, lobby, player, now), players: players + 1 };
    });
  }

  async findLobby(q: FindQuery, player: NewPlayer, create: LobbyRow | null): Promise<FindOutcome> {
    return this.bounded(async (c): Promise<FindOutcome> => {
      // Finds of one namespace take turns (its lobbies are what they compare and create); the expiries after, under it.
      await this.engine.lockFinds(c, q.namespace_id);
      await this.expire(c, q.now);
      if (await this.tooManyFromSource(c, q.namespace_id, player, q.source_limit)) return { kind: 'too_many_from_source' };
      const [mode = '', region = ''] = [q.game_modes[0], q.region_ids[0]];
      const args = { ns: q.namespace_id, version: q.version_id, modes: q.game_modes, regions: q.region_ids, mode, region, tags: q.tags, served: q.served_since };
      const search = q.game_modes.length === 1 && q.region_ids.length === 1 ? FIND_ONE : FIND_ANY;
      // A join may fill the candidate between the search and its lock: then look again.
      for (let attempt = 0; attempt < 8; attempt++) {
        const candidate = await first(c, search, args);
        if (candidate === undefined) break;
        const lobby = (await first(c, LOCK_LOBBY, { id: candidate.lobby_id }))!;
        if (lobby.stop_ts === null && lobby.is_closed === 0 && lobby.player_count < lobby.max_players)
          return { kind: 'joined', lobby: await this.enter(c, lobby, player, q.now), created: false };
      }
      if (create === null) return { kind: 'none' };
      const lobby = { ...create, player_count: 1, idle_ts: null };
      await c.run(INSERT_LOBBY, lobby);
      await this.firstPlayer(c, lobby, player, q.now, q.max_lobbies);
      return { kind: 'joined', lobby, created: true };
    }, { kind: 'too_many_lobbies' });
  }

  async readyLobby(lobbyId: string, now: number, registrationMs: number): Promise<LobbyRow | undefined> {
    return this.engine.transaction(async (c) => {
      await this.expire(c, now);
      if ((await c.run(MARK_READY, { id: lobbyId, now })) === 1) await c.run(RESTART_REGISTRATION, { id: lobbyId, by: now + registrationMs });
      return first(c, GET_LOBBY, { id: lobbyId });
    });
  }

  async connectPlayer(playerId: string, lobbyId: string, now: number): Promise<ConnectOutcome> {
    return this.engine.transaction(async (c): Promise<ConnectOutcome> => {
      await this.expire(c, now);
      const player = await first(c, LOCK_PLAYER, { id: playerId });
      if (player === undefined) return 'removed';
      if (player.lobby_id !== lobbyId) return 'different_lobby';
      if (player.connect_ts !== null) return 'already_connected';
      if (player.register_by_ts !== null && player.register_by_ts <= now) return 'expired';
      if (player.remove_ts !== null || (await first(c, GET_LOBBY, { id: lobbyId }))?.stop_ts !== null) return 'removed';
      await c.run(CONNECT_PLAYER, { id: playerId, now });
      return 'connected';
    });
  }

  async disconnectPlayer(playerId: string, lobbyId: string, now: number): Promise<'removed' | 'different_lobby'> {
    return this.engine.transaction(async (c) => {
      await this.expire(c, now);
      const player = await first(c, GET_PLAYER, { id: playerId });
      if (player === undefined) return 'removed';
      if (player.lobby_id !== lobbyId) return 'different_lobby';
      if (player.remove_ts !== null) return 'removed';
      // The lobby's row before the player's, as a stop takes them (its trigger removes the lobby's players).
      await c.all(LOCK_LOBBY, { id: lobbyId });
      if ((await c.run(REMOVE_PLAYER, { id: playerId, now })) === 1) {
        await c.run(LEAVE_LOBBY, { id: lobbyId, n: 1 });
        await this.emptied(c, lobbyId, now);
      }
      return 'removed';
    });
  }

  async claimExpiredGames(now: number, staleMs: number): Promise<{ expired: string[]; stale: string[] }> {
    const expired = await this.engine.all(CLAIM_EXPIRED, { now });
    const stale = await this.engine.all(CLAIM_STALE, { now, before: now - staleMs });
    return { expired: expired.map((r) => r.game_id), stale: stale.map((r) => r.game_id) };
  }

  async gameObjects(gameId: string): Promise<GameObjects> {
    const builds = await this.engine.all(GAME_BUILDS, { game: gameId });
    const exports = await this.engine.all(GAME_EXPORTS, { game: gameId });
    return { game_id: gameId, builds, export_ids: exports.map((r) => r.export_id) };
  }

  async deployVersion(namespace: NamespaceRow, deployTs: number): Promise<boolean> {
    return this.engine.transaction(async (c) => {
      const current = await first(c, LOCK_NAMESPACE, { id: namespace.namespace_id });
      if (current?.version_id === namespace.version_id) return false;
      await c.run(PUT_NAMESPACE, namespace);
      await c.run(APPEND_DEPLOY, { namespace_id: namespace.namespace_id, version_id: namespace.version_id, deploy_ts: deployTs });
      return true;
    });
  }

  async purgeGame(gameId: string, namespaceIds: string[], keepGame = false): Promise<PurgedGame> {
    return this.engine.transaction(async (c) => {
      const byNamespace = PURGE_BY_NAMESPACE.map(() => 0);
      for (const ns of namespaceIds) for (const [i, q] of PURGE_BY_NAMESPACE.entries()) byNamespace[i]! += await c.run(q, { ns });
      const byGame: number[] = [];
      for (const q of PURGE_BY_GAME) byGame.push(await c.run(q, { game: gameId }));
      if (!keepGame) await c.run(PURGE_GAME, { game: gameId });
      const [players, lobbies] = byNamespace.slice(-2) as [number, number];
      const [builds, exports] = byGame.slice(-2) as [number, number];
      return { lobbies, players, builds, exports };
    });
  }

  async insertBuild(build: BuildRow, upload: NewUpload): Promise<boolean> {
    return this.engine.transaction(async (c) => {
      if ((await c.run(INSERT_BUILD, build)) !== 1) return false;
      await c.run(INSERT_UPLOAD, upload);
      return true;
    });
  }

  async completeUpload(upload: UploadRow, sha256: string, size: number, now: number): Promise<void> {
    await this.engine.transaction(async (c) => {
      await c.run(COMPLETE_BUILD, { id: upload.build_id, sha256, size, now });
      await c.run(COMPLETE_UPLOAD, { id: upload.upload_id });
    });
  }

  async deleteBuild(buildId: string): Promise<BuildObject | undefined> {
    return this.engine.transaction(async (c) => {
      const row = await first(c, LOCK_BUILD, { id: buildId });
      if (row === undefined) return undefined;
      await c.run(DELETE_PARTS, { upload: row.upload_id });
      await c.run(DELETE_UPLOAD, { id: buildId });
      await c.run(DELETE_BUILD, { id: buildId });
      return row;
    });
  }

  async insertExport(exportId: string, gameId: string, csv: string, now: number, expiresTs: number): Promise<void> {
    await this.engine.transaction(async (c) => {
      await c.run(PRUNE_EXPORTS, { now });
      await c.run(INSERT_EXPORT, { id: exportId, game: gameId, csv, now, expires: expiresTs });
    });
  }

  async appendLobbyLogs(lobbyId: string, stream: LogStream, lines: Buffer[], now: number, bounds: LogBounds = LOG_BOUNDS, firstTs?: number): Promise<void> {
    if (lines.length === 0) return;
    const key = { id: lobbyId, stream };
    const dropped = await this.engine.transaction(async (c) => {
      await c.run(OPEN_STREAM, key);
      const state = (await first(c, LOCK_STREAM, key))!;
      // A batch whose first stamp the stream already holds was stored before (a retry after a lost answer).
      if (firstTs !== undefined && state.last_ts >= firstTs) return 0;
      const cut = lines.map((raw) => (raw.length > MAX_LOG_LINE_BYTES ? raw.subarray(0, MAX_LOG_LINE_BYTES) : raw));
      for (const line of cut) {
        state.last_ts = nextLogTs(state.last_ts, now, firstTs);
        state.line_count++;
        state.byte_count += line.length;
      }
      const chunks = toChunks(cut, state.last_ts);
      state.byte_count += chunks.length * (bounds.rowBytes ?? 0);
      await this.engine.insertLines(c, lobbyId, stream, chunks);
      const before = state.byte_count;
      let cutoff: number | null = null;
      let split: number | null = null;
      for (let more = true; more; ) {
        const step = trimLogs(state, bounds, await c.all(OLDEST_LINES, { ...key, after: cutoff ?? -1, limit: TRIM_PAGE }));
        cutoff = step.cutoff ?? cutoff;
        split = step.split;
        more = step.more;
      }
      // Rewritten, a row leaves its old bytes to reclaim too.
      let rewritten = 0;
      if (split !== null) {
        const chunk = toChunk((await first(c, CHUNK_AT, { ...key, ts: split }))!);
        const gone = splitChunk(state, bounds, chunk);
        if (gone === chunk.count) cutoff = split;
        else if (gone > 0) {
          const [rest] = toChunks(fromChunk(chunk).slice(gone).map((l) => l.line), chunk.ts);
          await c.run(PUT_CHUNK, { ...key, ts: split, line: rest!.bytes, line_count: rest!.count, lengths: rest!.lengths });
          rewritten = rest!.bytes.length;
        }
      }
      if (cutoff !== null) await c.run(DROP_LINES, { ...key, cutoff });
      await c.run(PUT_STREAM, { ...key, ...state });
      return before - state.byte_count + rewritten;
    });
    await this.engine.droppedLogs(dropped);
  }

  async lobbyLogs(lobbyId: string, stream: LogStream, limit: number, after?: number): Promise<LogLine[]> {
    const key = { id: lobbyId, stream, limit };
    if (limit <= 0) return [];
    if (after === undefined) return (await this.engine.all(RECENT_LINES, key)).flatMap((r) => fromChunk(toChunk(r))).slice(-limit);
    const rows = await this.engine.all(LINES_AFTER, { ...key, after });
    return rows.flatMap((r) => fromChunk(toChunk(r)).filter((l) => l.ts > after)).slice(0, limit);
  }

  async purgeStoppedLogs(before: number, limit: number): Promise<number> {
    return this.engine.transaction(async (c) => {
      const ids = await c.all(STOPPED_WITH_OUTPUT, { before, limit });
      for (const { lobby_id } of ids) for (const q of DROP_OUTPUT) await c.run(q, { id: lobby_id });
      return ids.length;
    });
  }
}
