// One contract for every Store: each method's meaning, run against SQLite and PostgreSQL alike (the store is the
// parameter). What only one engine has (PostgreSQL's migrations, its int8 limit) is at the end.
import { randomBytes, randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mulberry32 } from '../../src/emulator/faults.js';
import { prepareDataDir } from '../../src/emulator/datadir.js';
import { VERSION_ID } from '../../src/emulator/services/ids.js';
import { MIGRATIONS, SCHEMA_VERSION, SchemaTooNewError } from '../../src/emulator/stores/migrations.js';
import { PostgresStore } from '../../src/emulator/stores/postgres.js';
import { query as statement, type SqlEngine } from '../../src/emulator/stores/sql.js';
import { SqliteStore } from '../../src/emulator/stores/sqlite.js';
import { hasNodeSqlite, openDatabase, sqliteDriverName } from '../../src/emulator/stores/sqlite-driver.js';
import { LOBBY_INSERT_COLUMNS, LOG_BOUNDS, LOG_DISK_BYTES, MAX_LOG_LINE_BYTES, NOT_READY, NamespaceChanged, namespaceStamp, type BuildRow, type GameRow, type HistoryCursor, type LobbyRow, type VersionRow, type LocalObjectIndex, type LogLine, type NewPlayer, type NewUpload, type Store } from '../../src/emulator/stores/store.js';
import { createTestDatabase, PG_PRESENT, queryDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/cli.js';
import { SINCE_22 } from '../helpers/emulator.js';
import { lobbyRow } from '../helpers/lobby-row.js';

type ContractStore = Store & LocalObjectIndex;

const T0 = 1_763_000_000_000;
const NS = 'ns-1';
// Beyond 2^32, so a 32-bit column or parser would show.
const BIG = 7_999_999_999;

function lobby(overrides: Partial<LobbyRow> = {}): LobbyRow {
  return lobbyRow({ namespace_id: NS, max_players: 4, tags: '{"map":"dust"}', start_ts: T0 + 1000, ready_ts: T0 + 2000, ports: '{"default":{"port":41000}}', ...overrides }, T0);
}

const HOUR = 3_600_000;

/** A player find or join makes: pending, with `registrationMs` to connect. */
function pending(registrationMs = HOUR, sourceIp = '127.0.0.1'): NewPlayer {
  return { player_id: randomUUID(), source_ip: sourceIp, registration_ms: registrationMs, connected: false };
}

/** A player already connected (the admin join's). */
function connected(): NewPlayer {
  return { ...pending(), connected: true };
}

function build(gameId: string, tag: string, contentLength = 10): { build: BuildRow; upload: NewUpload } {
  const buildId = randomUUID();
  const uploadId = randomUUID();
  return {
    build: {
      build_id: buildId,
      game_id: gameId,
      upload_id: uploadId,
      display_name: `Build ${tag}`,
      image_tag: tag,
      kind: 'docker_image',
      compression: 'none',
      path: 'server.tar',
      content_type: null,
      content_length: contentLength,
      sha256: null,
      complete: 0,
      create_ts: T0,
      complete_ts: null,
    },
    upload: { upload_id: uploadId, build_id: buildId, content_length: contentLength, part_size: 4, part_count: Math.ceil(contentLength / 4) },
  };
}

/** What a version 19 store held: a running lobby and a stopped one, each with a connected player from one address. */
async function lobbiesOfVersion19(store: Store): Promise<Version19Lobbies> {
  const ns = `ns-${randomUUID()}`;
  const [running, stopped] = [lobby({ namespace_id: ns, ready_ts: T0 }), lobby({ namespace_id: ns, ready_ts: T0 })];
  const players: string[] = [];
  for (const l of [running, stopped]) {
    const p = pending(HOUR, '10.9.0.2');
    await store.insertLobby(l, p);
    await store.connectPlayer(p.player_id, l.lobby_id, T0 + 1);
    players.push(p.player_id);
  }
  await store.stopLobby(stopped.lobby_id, T0 + 5, 0, false);
  return { running, stopped, runningPlayer: players[0]!, stoppedPlayer: players[1]! };
}
interface Version19Lobbies {
  running: LobbyRow;
  stopped: LobbyRow;
  runningPlayer: string;
  stoppedPlayer: string;
}

/** The statement of migration step `index` (to version index + 1) on `engine` that `statement` matches. */
function stepStatement(index: number, engine: 'sqlite' | 'postgres', statement: RegExp): string {
  const found = statement.exec(MIGRATIONS[index]![engine]);
  if (found === null) throw new Error(`migration ${index + 1} on ${engine} has no ${statement.source}`);
  return found[0];
}

/** After the migration: the stopped lobby's player removed at its stop, the counts as before, and a stop removes. */
async function expectPlayersLeftWithTheirLobby(store: Store, { running, runningPlayer, stoppedPlayer }: Version19Lobbies): Promise<void> {
  const ns = running.namespace_id;
  const removedAt = async (id: string) => (await store.getPlayer(id))!.remove_ts;
  expect([await removedAt(runningPlayer), await removedAt(stoppedPlayer)]).toEqual([null, T0 + 5]);
  expect(await store.playersFromSource(ns, '10.9.0.2', T0 + 6)).toBe(1);
  expect(await store.playerCounts(ns)).toEqual([{ game_mode: running.game_mode, region_id: running.region_id, player_count: 1 }]);
  await store.stopLobby(running.lobby_id, T0 + 7, 0, false);
  expect(await removedAt(runningPlayer)).toBe(T0 + 7);
  expect(await store.playersFromSource(ns, '10.9.0.2', T0 + 8)).toBe(0);
  expect(await store.playerCounts(ns)).toEqual([]);
}

const ENGINES: [string, boolean, () => Promise<ContractStore>][] = [
  ['SQLite', true, async () => SqliteStore.open(join(prepareDataDir(tempDir()).root, 'emulator.db'))],
  ['PostgreSQL', PG_PRESENT, async () => PostgresStore.open({ connectionString: await createTestDatabase() })],
];

describe.each(ENGINES)('the Store contract on %s', (_name, present, open) => {
  let store: ContractStore;
  beforeAll(async () => {
    if (present) store = await open();
  });
  afterAll(async () => {
    await store?.close();
  });
  const it_ = it.skipIf(!present);
  /** The transactions PostgreSQL rolled back as deadlocks, each after a second's wait (SQLite has no such count). */
  const deadlocks = () => (store as unknown as { engine: { deadlocks?: number } }).engine.deadlocks ?? 0;

  it_("a lobby keeps the version it was made with; find reads the query's version only; a deploy stops the outdated idle ones", async () => {
    const ns = randomUUID();
    const older = lobby({ namespace_id: ns });
    const current = lobby({ namespace_id: ns, version_id: 'v-2', max_players: 2 });
    const idle = lobby({ namespace_id: ns });
    for (const l of [older, current, idle]) await store.insertLobby(l, pending());
    expect((await store.getLobby(current.lobby_id))!.version_id).toBe('v-2');
    // An idle lobby (no player held: what an idle-lobby update would make): nothing of the store's API empties a lobby without stopping it.
    const empty = statement<{ id: string }>()((db, p) => db.updateTable('lobbies').set({ player_count: 0 }).where('lobby_id', '=', p.id));
    await (store as unknown as { engine: SqlEngine }).engine.run(empty, { id: idle.lobby_id });
    const find = (version_id: string) =>
      store.findLobby({ namespace_id: ns, version_id, game_modes: ['default'], region_ids: ['lnd-atl'], tags: {}, now: T0, source_limit: null, max_lobbies: 128, served_since: 0 }, pending(), null);
    expect(await find('v-2')).toMatchObject({ kind: 'joined', lobby: { lobby_id: current.lobby_id, version_id: 'v-2' } });
    expect(await find('v-3')).toEqual({ kind: 'none' });
    // The deploy of v-2: the idle lobby of the older version stops now; the occupied one, and v-2's, run on.
    expect(await store.stopIdleOutdated(ns, 'v-2', T0 + 5)).toEqual([idle.lobby_id]);
    expect(await store.getLobby(idle.lobby_id)).toMatchObject({ stop_ts: T0 + 5, exit_code: 0, failed: 0 });
    expect((await store.getLobby(older.lobby_id))!.stop_ts).toBeNull();
    expect((await store.getLobby(current.lobby_id))!.stop_ts).toBeNull();
    expect(await store.stopIdleOutdated(ns, 'v-2', T0 + 6)).toEqual([]);
  });

  it_('lobby_count_max counts a namespace\'s running lobbies as they are made, stopped and deleted; racing creates never pass it', async () => {
    const ns = randomUUID();
    const other = randomUUID();
    const mine = () => lobby({ namespace_id: ns });
    // Six creates at once against a bound of 4 (two replicas on PostgreSQL race the same way): four are made.
    const made = await Promise.all(Array.from({ length: 6 }, () => store.insertLobby(mine(), pending(), 4)));
    expect(made.filter(Boolean)).toHaveLength(4);
    expect(await store.insertLobby(lobby({ namespace_id: other }), pending(), 4)).toBe(true);
    const running = (await store.listLobbies(ns)).filter((l) => l.stop_ts === null);
    expect(running).toHaveLength(4);
    // A stop gives its place back, once (a second stop of it changes nothing).
    await store.stopLobby(running[0]!.lobby_id, T0 + 1, 0, false);
    await store.stopLobby(running[0]!.lobby_id, T0 + 2, 0, false);
    expect(await store.insertLobby(mine(), pending(), 4)).toBe(true);
    expect(await store.insertLobby(mine(), pending(), 4)).toBe(false);
    // Deleted with its namespace, a running lobby counts no more: the namespace starts again from none.
    await store.purgeGame(randomUUID(), [ns]);
    const again = await Promise.all(Array.from({ length: 5 }, () => store.insertLobby(mine(), pending(), 4)));
    expect(again.filter(Boolean)).toHaveLength(4);
  });

  it_('insertLobby with `seen`: written only while the namespace\'s row is still the one its lobby was made from', async () => {
    const ns = randomUUID();
    const mine = () => lobby({ namespace_id: ns });
    // No row yet (a namespace every game starts with): its stamp is ''.
    expect(namespaceStamp(undefined)).toBe('');
    expect(await store.insertLobby(mine(), pending(), 4, '')).toBe(true);
    const row = { namespace_id: ns, game_id: randomUUID(), name_id: `ns-${ns.slice(0, 8)}`, display_name: 'N', version_id: VERSION_ID, create_ts: T0, lobby_count_max: 4, max_players_per_client: null };
    await store.putNamespace(row);
    // Made from the row before it: refused, nothing written; from the row as it is: written.
    const stale = mine();
    await expect(store.insertLobby(stale, pending(), 4, '')).rejects.toBeInstanceOf(NamespaceChanged);
    expect(await store.getLobby(stale.lobby_id)).toBeUndefined();
    expect(namespaceStamp(row)).toBe(`${VERSION_ID}|4|`);
    expect(await store.insertLobby(mine(), pending(), 4, namespaceStamp(row))).toBe(true);
    // Each part of the stamp counts: the per-client bound too. Past the lobby bound with the right stamp: false.
    await store.putNamespace({ ...row, max_players_per_client: 3 });
    await expect(store.insertLobby(mine(), pending(), 4, namespaceStamp(row))).rejects.toBeInstanceOf(NamespaceChanged);
    const now = { ...row, max_players_per_client: 3 };
    expect(await store.insertLobby(mine(), pending(), 3, namespaceStamp(now))).toBe(true);
    expect(await store.insertLobby(mine(), pending(), 3, namespaceStamp(now))).toBe(false);
  });

  it_('idle lobbies: top-ups racing never pass the min nor lobby_count_max; an emptied lobby stays up to idle_max, the longest idle beyond it stop', async () => {
    const ns = randomUUID();
    const key = { namespace_id: ns, version_id: VERSION_ID, game_mode: 'default', region_id: 'lnd-atl' };
    const idleLobby = () => lobby({ namespace_id: ns, idle_max: 2, player_count: 0, tags: '{}' });
    // Eight updates at once (two replicas on PostgreSQL race the same way): the min, 2, is made once.
    const made = await Promise.all(Array.from({ length: 8 }, () => store.insertIdleLobby(idleLobby(), 2, 128, T0)));
    expect(made.filter((o) => o === 'inserted')).toHaveLength(2);
    expect(made.filter((o) => o === 'enough')).toHaveLength(6);
    expect(await store.idleCount(key, T0)).toBe(2);
    // The namespace's bound counts every running lobby.
    expect(await store.insertIdleLobby(idleLobby(), 3, 2, T0)).toBe('too_many_lobbies');
    // An idle lobby is a find candidate like any other (chosen last: emptiest) and leaves the idle set.
    const query = { namespace_id: ns, version_id: VERSION_ID, game_modes: ['default'], region_ids: ['lnd-atl'], tags: {}, now: T0 + 1, source_limit: null, max_lobbies: 128, served_since: 0 };
    const seat = pending();
    const found = await store.findLobby(query, seat, null);
    expect(found).toMatchObject({ kind: 'joined', created: false });
    expect(await store.idleCount(key, T0 + 1)).toBe(1);
    // Its player leaves: idle again (2, the max), not stopped.
    const foundId = (found as { lobby: LobbyRow }).lobby.lobby_id;
    await store.disconnectPlayer(seat.player_id, foundId, T0 + 2);
    expect(await store.getLobby(foundId)).toMatchObject({ stop_ts: null, player_count: 0, idle_ts: T0 + 2 });
    // A third lobby empties: past the max, the longest idle (the other, idle since T0) stops.
    const third = lobby({ namespace_id: ns, idle_max: 2 });
    const player = pending();
    await store.insertLobby(third, player);
    await store.disconnectPlayer(player.player_id, third.lobby_id, T0 + 3);
    expect(await store.idleCount(key, T0 + 3)).toBe(2);
    expect((await store.getLobby(third.lobby_id))!.stop_ts).toBeNull();
    expect((await store.getLobby(foundId))!.stop_ts).toBeNull();
    // trimIdle stops the longest idle beyond a max.
    expect(await store.trimIdle(key, 1, T0 + 4)).toEqual([foundId]);
    // A deploy: the occupied lobbies of older versions stop once they empty (their idle_max 0).
    const occupied = lobby({ namespace_id: ns, idle_max: 2 });
    const last = pending();
    await store.insertLobby(occupied, last);
    expect(await store.stopIdleOutdated(ns, 'v-next', T0 + 5)).toEqual([third.lobby_id]);
    await store.disconnectPlayer(last.player_id, occupied.lobby_id, T0 + 6);
    expect((await store.getLobby(occupied.lobby_id))!.stop_ts).toBe(T0 + 6);
  });

  it_('insertLobby keeps every field and the creating player; getLobby reads it back', async () => {
    const l = lobby({ lobby_config: '{"a":1}', idle_lifetime_ms: 60_000, idle_stop_ts: T0 + 62_000, create_ts: T0 + BIG });
    await store.insertLobby(l, pending());
    expect(await store.getLobby(l.lobby_id)).toEqual(l);
    expect(await store.getLobby(randomUUID())).toBeUndefined();
  });

  it_('joinLobby: joined, then full at max_players, and the idle deadline moves with each join', async () => {
    const l = lobby({ max_players: 2, idle_lifetime_ms: 10_000, idle_stop_ts: T0 + 12_000 });
    await store.insertLobby(l, pending());
    const joined = await store.joinLobby(l.lobby_id, pending(), T0 + 5_000, null);
    expect(joined).toMatchObject({ kind: 'joined', players: 2 });
    expect((await store.getLobby(l.lobby_id))!.idle_stop_ts).toBe(T0 + 15_000);
    const full = await store.joinLobby(l.lobby_id, pending(), T0 + 6_000, null);
    expect(full).toMatchObject({ kind: 'full', players: 2 });
    expect(await store.joinLobby(randomUUID(), pending(), T0, null)).toEqual({ kind: 'not_found' });
  });

  it_('joinLobby: a stopped lobby, and one past its idle deadline, refuse the player and stay stopped at that deadline', async () => {
    const stopped = lobby();
    await store.insertLobby(stopped, pending());
    expect(await store.stopLobby(stopped.lobby_id, T0 + 3_000, 0, false)).toBe(true);
    expect(await store.joinLobby(stopped.lobby_id, pending(), T0 + 4_000, null)).toMatchObject({ kind: 'stopped' });
    const idle = lobby({ idle_lifetime_ms: 1_000, idle_stop_ts: T0 + 3_000 });
    await store.insertLobby(idle, pending());
    const outcome = await store.joinLobby(idle.lobby_id, pending(), T0 + 10_000, null);
    expect(outcome).toMatchObject({ kind: 'stopped', lobby: { stop_ts: T0 + 3_000, exit_code: 0, failed: 0 } });
    expect(await store.getLobby(idle.lobby_id)).toMatchObject({ stop_ts: T0 + 3_000, exit_code: 0, failed: 0 });
  });

  it_('concurrent joins at max_players: exactly max_players seats, every other join answered full', async () => {
    const l = lobby({ max_players: 5 });
    await store.insertLobby(l, pending());
    const outcomes = await Promise.all(Array.from({ length: 24 }, (_, i) => store.joinLobby(l.lobby_id, pending(), T0 + i, null)));
    const kinds = outcomes.map((o) => o.kind);
    expect(kinds.filter((k) => k === 'joined')).toHaveLength(4);
    expect(kinds.filter((k) => k === 'full')).toHaveLength(20);
    const seats = outcomes.flatMap((o) => (o.kind === 'joined' ? [o.players] : [])).sort();
    expect(seats).toEqual([2, 3, 4, 5]);
    expect((await store.getLobby(l.lobby_id))!.player_count).toBe(5);
  });

  it_('expireIdle stops exactly the lobbies whose deadline passed, at that deadline', async () => {
    const due = lobby({ idle_lifetime_ms: 500, idle_stop_ts: T0 + 2_500 });
    const later = lobby({ idle_lifetime_ms: 500_000, idle_stop_ts: T0 + 502_000 });
    await store.insertLobby(due, pending());
    await store.insertLobby(later, pending());
    await store.expireIdle(T0 + 3_000);
    expect(await store.getLobby(due.lobby_id)).toMatchObject({ stop_ts: T0 + 2_500, exit_code: 0, failed: 0 });
    expect((await store.getLobby(later.lobby_id))!.stop_ts).toBeNull();
  });

  it_('stopLobby keeps the first stop; false for a stopped or unknown lobby', async () => {
    const l = lobby();
    await store.insertLobby(l, pending());
    expect(await store.stopLobby(l.lobby_id, T0 + 5_000, 137, true)).toBe(true);
    expect(await store.stopLobby(l.lobby_id, T0 + 6_000, 0, false)).toBe(false);
    expect(await store.getLobby(l.lobby_id)).toMatchObject({ stop_ts: T0 + 5_000, exit_code: 137, failed: 1 });
    expect(await store.stopLobby(randomUUID(), T0, 0, false)).toBe(false);
  });

  it_('playerCounts counts the connected players of running lobbies: not pending ones, not removed ones, none of a stopped lobby', async () => {
    const ns = `ns-${randomUUID()}`;
    const counts = () => store.playerCounts(ns);
    const duos = (n: number) => [{ game_mode: 'duos', region_id: 'lnd-fra', player_count: n }];
    const a = lobby({ namespace_id: ns, game_mode: 'duos', region_id: 'lnd-fra', max_players: 8, ready_ts: T0 });
    // A pending player holds a place (find's capacity) but is not in game: not counted until its server connects it.
    const creator = pending();
    await store.insertLobby(a, creator);
    const waiting = pending();
    await store.joinLobby(a.lobby_id, waiting, T0, null);
    expect(await counts()).toEqual([]);
    expect((await store.getLobby(a.lobby_id))!.player_count).toBe(2);
    expect(await store.connectPlayer(creator.player_id, a.lobby_id, T0 + 1)).toBe('connected');
    expect(await counts()).toEqual(duos(1));
    // Connected from the start (the admin join's player): counted at once.
    const admitted = connected();
    await store.joinLobby(a.lobby_id, admitted, T0 + 2, null);
    expect(await counts()).toEqual(duos(2));
    // Removed: a connected player who disconnects no longer counts; a pending one removed never did.
    await store.disconnectPlayer(admitted.player_id, a.lobby_id, T0 + 3);
    await store.disconnectPlayer(waiting.player_id, a.lobby_id, T0 + 3);
    expect(await counts()).toEqual(duos(1));
    // A pending player whose registration time passes leaves uncounted.
    const late = pending(60_000);
    await store.joinLobby(a.lobby_id, late, T0 + 4, null);
    await store.expireIdle(T0 + 4 + 60_000);
    expect((await store.getPlayer(late.player_id))!.remove_ts).toBe(T0 + 4 + 60_000);
    expect(await counts()).toEqual(duos(1));
    // A stopped lobby's connected players are not counted, and nothing that happens to them later counts again.
    const b = lobby({ namespace_id: ns, game_mode: 'duos', region_id: 'lnd-fra' });
    const inB = pending();
    await store.insertLobby(b, inB);
    await store.connectPlayer(inB.player_id, b.lobby_id, T0 + 5);
    const pendingInB = pending();
    await store.joinLobby(b.lobby_id, pendingInB, T0 + 5, null);
    expect(await counts()).toEqual(duos(2));
    await store.stopLobby(b.lobby_id, T0 + 6, 0, false);
    expect(await counts()).toEqual(duos(1));
    expect(await store.connectPlayer(pendingInB.player_id, b.lobby_id, T0 + 7)).toBe('removed');
    await store.disconnectPlayer(inB.player_id, b.lobby_id, T0 + 7);
    expect(await counts()).toEqual(duos(1));
    // By game mode and region; a game mode and region whose players all left has no row.
    const c = lobby({ namespace_id: ns, game_mode: 'squads', region_id: 'lnd-sgp' });
    const inC = connected();
    await store.insertLobby(c, inC);
    expect(await counts()).toEqual(expect.arrayContaining([...duos(1), { game_mode: 'squads', region_id: 'lnd-sgp', player_count: 1 }]));
    await store.disconnectPlayer(inC.player_id, c.lobby_id, T0 + 8);
    expect(await counts()).toEqual(duos(1));
  });

  it_("a lobby that stops removes its players at its stop time, as production's cleanup does: the per-client count no longer walks them", async () => {
    const ns = `ns-${randomUUID()}`;
    const ip = '10.9.0.1';
    const a = lobby({ namespace_id: ns, max_players: 8, ready_ts: T0 });
    const creator = pending(HOUR, ip);
    await store.insertLobby(a, creator);
    expect(await store.connectPlayer(creator.player_id, a.lobby_id, T0 + 1)).toBe('connected');
    const waiting = pending(HOUR, ip);
    const left = pending(HOUR, ip);
    await store.joinLobby(a.lobby_id, waiting, T0 + 1, null);
    await store.joinLobby(a.lobby_id, left, T0 + 1, null);
    await store.disconnectPlayer(left.player_id, a.lobby_id, T0 + 2);
    const b = lobby({ namespace_id: ns, max_players: 8, ready_ts: T0 });
    const inB = pending(HOUR, ip);
    await store.insertLobby(b, inB);
    await store.connectPlayer(inB.player_id, b.lobby_id, T0 + 2);
    expect(await store.playersFromSource(ns, ip, T0 + 3)).toBe(3);
    const one = [{ game_mode: b.game_mode, region_id: b.region_id, player_count: 2 }];
    expect(await store.playerCounts(ns)).toEqual(one);

    expect(await store.stopLobby(a.lobby_id, T0 + 5, 0, false)).toBe(true);
    const removedAt = async (id: string) => (await store.getPlayer(id))!.remove_ts;
    expect([await removedAt(creator.player_id), await removedAt(waiting.player_id), await removedAt(left.player_id)]).toEqual([T0 + 5, T0 + 5, T0 + 2]);
    expect(await store.playersFromSource(ns, ip, T0 + 6)).toBe(1);
    expect(await store.playerCounts(ns)).toEqual([{ ...one[0]!, player_count: 1 }]);
    // Its server's late disconnect changes nothing: the player left with the lobby.
    await store.disconnectPlayer(creator.player_id, a.lobby_id, T0 + 7);
    expect(await removedAt(creator.player_id)).toBe(T0 + 5);
    expect(await store.playerCounts(ns)).toEqual([{ ...one[0]!, player_count: 1 }]);
    // A lobby stopped by time (an idle lobby's lifetime) too.
    const idle = lobby({ namespace_id: ns, ready_ts: T0, idle_lifetime_ms: 1_000, idle_stop_ts: T0 + 8 });
    const inIdle = connected();
    await store.insertLobby(idle, inIdle);
    await store.expireIdle(T0 + 9);
    expect(await removedAt(inIdle.player_id)).toBe(T0 + 8);
    expect(await store.playerCounts(ns)).toEqual([{ ...one[0]!, player_count: 1 }]);
  });

  it_("a lobby's stop racing its players' disconnects and connects: none of them fails, and nothing is counted after", async () => {
    // A match ends: the server disconnects its players while the lobby is stopped (its exit), and late players
    // still connect. On PostgreSQL each takes row locks of the lobby and its players in one order.
    const ns = `ns-${randomUUID()}`;
    const lobbies = Array.from({ length: 24 }, () => lobby({ namespace_id: ns, max_players: 8, ready_ts: T0 }));
    const seats: { lobby: string; player: string; connect: boolean }[] = [];
    for (const l of lobbies) {
      const players = [pending(), pending(), pending(), pending()];
      await store.insertLobby(l, players[0]!);
      for (const p of players.slice(1)) await store.joinLobby(l.lobby_id, p, T0, null);
      for (const [i, p] of players.entries()) {
        if (i < 3) await store.connectPlayer(p.player_id, l.lobby_id, T0 + 1);
        seats.push({ lobby: l.lobby_id, player: p.player_id, connect: i === 3 });
      }
    }
    expect((await store.playerCounts(ns)).reduce((n, r) => n + r.player_count, 0)).toBe(24 * 3);
    const before = deadlocks();
    const calls = [
      ...lobbies.map((l) => store.stopLobby(l.lobby_id, T0 + 5, 0, false)),
      ...seats.map((s) => (s.connect ? store.connectPlayer(s.player, s.lobby, T0 + 5) : store.disconnectPlayer(s.player, s.lobby, T0 + 5))),
    ];
    const failed = (await Promise.allSettled(calls)).filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    expect(failed).toEqual([]);
    expect(deadlocks() - before).toBe(0);
    expect(await store.playerCounts(ns)).toEqual([]);
    for (const s of seats) expect((await store.getPlayer(s.player))!.remove_ts).not.toBeNull();
  });

  it_("a lobby's stop racing its pending players' expiry: none of them fails or deadlocks, and nothing is counted after", async () => {
    // A lobby stopped (its server's exit) as the registration of its late players lapses: the expiry, run first by
    // every other call, and the stop's trigger each take the lobby's row and its players' rows.
    const ns = `ns-${randomUUID()}`;
    const lobbies = Array.from({ length: 24 }, () => lobby({ namespace_id: ns, max_players: 8, ready_ts: T0 }));
    for (const l of lobbies) {
      const first = pending();
      await store.insertLobby(l, first);
      await store.connectPlayer(first.player_id, l.lobby_id, T0 + 1);
      for (let i = 0; i < 3; i++) await store.joinLobby(l.lobby_id, pending(10), T0, null);
    }
    const before = deadlocks();
    const calls = [
      ...lobbies.map((l) => store.stopLobby(l.lobby_id, T0 + 20, 0, false)),
      ...lobbies.map(() => store.expireIdle(T0 + 20)),
    ];
    const failed = (await Promise.allSettled(calls)).filter((r) => r.status === 'rejected').map((r) => String((r as PromiseRejectedResult).reason));
    expect(failed).toEqual([]);
    expect(deadlocks() - before).toBe(0);
    expect(await store.playerCounts(ns)).toEqual([]);
    for (const l of lobbies) expect((await store.getLobby(l.lobby_id))!.stop_ts).not.toBeNull();
  });

  it_('playerCounts stays the count of running lobbies\' connected players through any mix of creates, joins, connects, disconnects, expiries, stops and a purge', async () => {
    const ns = `ns-${randomUUID()}`;
    const random = mulberry32(22);
    const pick = <T,>(xs: T[]): T => xs[Math.floor(random() * xs.length)]!;
    const REGISTRATION_MS = 80;
    const IDLE_MS = 50;
    // The model: each lobby's key, whether it runs, its idle deadline, and its players' states.
    type ModelPlayer = { id: string; lobby: string; state: 'pending' | 'connected' | 'removed'; registerBy: number };
    type ModelLobby = { key: string; running: boolean; auto: boolean; idleStop: number | null; players: ModelPlayer[] };
    const model = new Map<string, ModelLobby>();
    const holding = (m: ModelLobby) => m.players.filter((p) => p.state !== 'removed').length;
    const remove = (m: ModelLobby, p: ModelPlayer) => {
      p.state = 'removed';
      // A lobby (made by find or by create) stops when its last player leaves.
      if (m.running && holding(m) === 0) m.running = false;
    };
    // What time alone decides, as every store operation but stopLobby does first (for the counts, the same).
    const expire = (now: number) => {
      for (const m of model.values()) {
        if (m.running && m.idleStop !== null && m.idleStop <= now) m.running = false;
        for (const p of m.players) if (p.state === 'pending' && p.registerBy <= now) remove(m, p);
      }
    };
    const player = (kind: 'pending' | 'connected') => (kind === 'pending' ? pending(REGISTRATION_MS) : connected());
    let now = T0;
    const tally = { connects: 0, disconnects: 0, expired: 0 };
    for (let step = 0; step < 200; step++) {
      now += 10;
      expire(now);
      const op = random();
      const ids = [...model.keys()];
      const everyone = [...model.values()].flatMap((m) => m.players);
      if (op < 0.2 || ids.length === 0) {
        const idle = random() < 0.3;
        const auto = random() < 0.5;
        const kind = random() < 0.5 ? 'pending' : 'connected';
        const l = lobby({ namespace_id: ns, game_mode: pick(['default', 'duos']), region_id: pick(['lnd-atl', 'lnd-fra']), max_players: 4, create_ts: now, ready_ts: now, auto_created: auto ? 1 : 0, idle_lifetime_ms: idle ? IDLE_MS : null, idle_stop_ts: idle ? now + IDLE_MS : null });
        const p = player(kind);
        await store.insertLobby(l, p);
        model.set(l.lobby_id, { key: `${l.game_mode}/${l.region_id}`, running: true, auto, idleStop: idle ? now + IDLE_MS : null, players: [{ id: p.player_id, lobby: l.lobby_id, state: kind, registerBy: now + REGISTRATION_MS }] });
      } else if (op < 0.5) {
        const id = pick(ids);
        const m = model.get(id)!;
        const kind = random() < 0.7 ? 'pending' : 'connected';
        const p = player(kind);
        const outcome = await store.joinLobby(id, p, now, null);
        expect(outcome.kind).toBe(!m.running ? 'stopped' : holding(m) >= 4 ? 'full' : 'joined');
        if (outcome.kind === 'joined') {
          m.players.push({ id: p.player_id, lobby: id, state: kind, registerBy: now + REGISTRATION_MS });
          if (m.idleStop !== null) m.idleStop = now + IDLE_MS;
        }
      } else if (op < 0.7) {
        // Mostly a player waiting to connect; sometimes any, whose refusal must change nothing.
        const waiting = everyone.filter((p) => p.state === 'pending');
        const p = pick(waiting.length > 0 && random() < 0.8 ? waiting : everyone);
        const m = model.get(p.lobby)!;
        const outcome = await store.connectPlayer(p.id, p.lobby, now);
        const connects = p.state === 'pending' && m.running;
        expect(outcome === 'connected').toBe(connects);
        if (connects) {
          p.state = 'connected';
          tally.connects++;
        }
      } else if (op < 0.85) {
        const p = pick(everyone);
        await store.disconnectPlayer(p.id, p.lobby, now);
        if (p.state !== 'removed') {
          if (p.state === 'connected' && model.get(p.lobby)!.running) tally.disconnects++;
          remove(model.get(p.lobby)!, p);
        }
      } else if (op < 0.93) {
        const id = pick(ids);
        await store.stopLobby(id, now, 0, false);
        model.get(id)!.running = false;
      } else {
        await store.expireIdle(now);
      }
    }
    await store.expireIdle(now);
    expire(now);
    tally.expired = [...model.values()].flatMap((m) => m.players).filter((p) => p.state === 'removed').length - tally.disconnects;
    const expected = new Map<string, number>();
    for (const m of model.values())
      if (m.running) for (const p of m.players) if (p.state === 'connected') expected.set(m.key, (expected.get(m.key) ?? 0) + 1);
    const counted = new Map((await store.playerCounts(ns)).map((r) => [`${r.game_mode}/${r.region_id}`, r.player_count]));
    expect(counted).toEqual(expected);
    // The walk went through every kind of change.
    expect(expected.size).toBeGreaterThan(0);
    expect(tally.connects).toBeGreaterThan(10);
    expect(tally.disconnects).toBeGreaterThan(5);
    expect(tally.expired).toBeGreaterThan(5);
    await store.purgeGame(randomUUID(), [ns]);
    expect(await store.playerCounts(ns)).toEqual([]);
  });

  it_('lobbyHistory: stopped in the window, created in it, or running and created before its end; newest first', async () => {
    const ns = `ns-${randomUUID()}`;
    const qs = T0 + 100_000;
    const qe = T0 + 200_000;
    const stoppedIn = lobby({ namespace_id: ns, create_ts: T0, stop_ts: qs + 10 });
    const createdIn = lobby({ namespace_id: ns, create_ts: qs + 20, stop_ts: qe + 50 });
    const runningBefore = lobby({ namespace_id: ns, create_ts: T0 + 5 });
    const stoppedBefore = lobby({ namespace_id: ns, create_ts: T0, stop_ts: qs });
    const createdAfter = lobby({ namespace_id: ns, create_ts: qe + 1 });
    // Two with one create_ts: ordered by id, bytewise, the same on every engine.
    const twinA = lobby({ namespace_id: ns, lobby_id: `a${randomUUID().slice(1)}`, create_ts: qs + 30 });
    const twinB = lobby({ namespace_id: ns, lobby_id: `b${randomUUID().slice(1)}`, create_ts: qs + 30 });
    for (const l of [stoppedIn, createdIn, runningBefore, stoppedBefore, createdAfter, twinB, twinA]) {
      const stopTs = l.stop_ts;
      await store.insertLobby({ ...l, stop_ts: null }, pending());
      if (stopTs !== null) await store.stopLobby(l.lobby_id, stopTs, 0, false);
    }
    const idsOf = (rows: LobbyRow[]) => rows.map((l) => l.lobby_id);
    const all = idsOf(await store.lobbyHistory(ns, qs, qe, 100));
    expect(all).toEqual([twinA.lobby_id, twinB.lobby_id, createdIn.lobby_id, runningBefore.lobby_id, stoppedIn.lobby_id]);
    // A page at a time, each from where the last one ended: the same lobbies, in the same order, each once.
    const paged: string[] = [];
    let after: HistoryCursor | undefined;
    for (;;) {
      const page = await store.lobbyHistory(ns, qs, qe, 2, after);
      paged.push(...idsOf(page));
      if (page.length < 2) break;
      after = { create_ts: page.at(-1)!.create_ts, lobby_id: page.at(-1)!.lobby_id };
    }
    expect(paged).toEqual(all);
    // Between the twins: the one whose id's bytes come after.
    expect(idsOf(await store.lobbyHistory(ns, qs, qe, 1, { create_ts: qs + 30, lobby_id: twinA.lobby_id }))).toEqual([twinB.lobby_id]);
    // From a time with no id: all created at it, then before it.
    expect(idsOf(await store.lobbyHistory(ns, qs, qe, 100, { create_ts: qs + 30, lobby_id: '' }))).toEqual(all);
    expect(idsOf(await store.lobbyHistory(ns, qs, qe, 100, { create_ts: qs + 29, lobby_id: '' }))).toEqual(all.slice(2));
    expect(await store.lobbyHistory(ns, qs, qe, 100, { create_ts: T0 - 1, lobby_id: '' })).toEqual([]);
  });

  const query = (ns: string, overrides: Record<string, unknown> = {}) => ({
    namespace_id: ns,
    version_id: VERSION_ID,
    game_modes: ['default'],
    region_ids: ['lnd-atl'],
    tags: {},
    now: T0,
    source_limit: null,
    max_lobbies: 128,
    served_since: 0,
    ...overrides,
  });

  it_('findLobby: the fullest open public lobby holding every tag asked wins; closed, full, private and stopped ones never', async () => {
    const ns = `ns-${randomUUID()}`;
    const one = lobby({ namespace_id: ns, max_players: 4, tags: '{"map":"dust","mode":"ctf"}' });
    const two = lobby({ namespace_id: ns, max_players: 4, tags: '{"map":"dust"}' });
    const full = lobby({ namespace_id: ns, max_players: 2, tags: '{"map":"dust"}' });
    const closed = lobby({ namespace_id: ns, max_players: 8, tags: '{"map":"dust"}' });
    const privateOne = lobby({ namespace_id: ns, max_players: 8, publicity: 'private' });
    const otherMode = lobby({ namespace_id: ns, max_players: 8, game_mode: 'duos' });
    for (const l of [one, two, full, closed, privateOne, otherMode]) await store.insertLobby(l, pending());
    await store.joinLobby(two.lobby_id, pending(), T0, null);
    await store.joinLobby(full.lobby_id, pending(), T0, null);
    for (let i = 0; i < 3; i++) await store.joinLobby(closed.lobby_id, pending(), T0, null);
    await store.setLobbyClosed(closed.lobby_id, true);
    const found = await store.findLobby(query(ns, { tags: { map: 'dust' } }), pending(), null);
    expect(found).toMatchObject({ kind: 'joined', created: false, lobby: { lobby_id: two.lobby_id, player_count: 3 } });
    // Every requested tag must be on the lobby; extra tags on it do not matter.
    expect(await store.findLobby(query(ns, { tags: { mode: 'ctf' } }), pending(), null)).toMatchObject({ lobby: { lobby_id: one.lobby_id } });
    expect(await store.findLobby(query(ns, { tags: { map: 'mirage' } }), pending(), null)).toEqual({ kind: 'none' });
    // Reopened, the closed lobby is the fullest again.
    await store.setLobbyClosed(closed.lobby_id, false);
    expect(await store.findLobby(query(ns), pending(), null)).toMatchObject({ lobby: { lobby_id: closed.lobby_id, player_count: 5 } });
  });

  it_('findLobby creates the given lobby when nothing fits, up to max_lobbies; with too many pending players from one source it refuses', async () => {
    const ns = `ns-${randomUUID()}`;
    const made = lobby({ namespace_id: ns, game_mode: 'squads', auto_created: 1 });
    const created = await store.findLobby(query(ns, { game_modes: ['squads'] }), pending(), made);
    expect(created).toMatchObject({ kind: 'joined', created: true, lobby: { lobby_id: made.lobby_id, player_count: 1 } });
    expect(await store.getLobby(made.lobby_id)).toMatchObject({ auto_created: 1, player_count: 1 });
    expect(await store.findLobby(query(ns, { game_modes: ['duos'], max_lobbies: 1 }), pending(), lobby({ namespace_id: ns }))).toEqual({ kind: 'too_many_lobbies' });
    expect(await store.findLobby(query(ns, { source_limit: 1 }), pending(HOUR, '127.0.0.1'), null)).toEqual({ kind: 'too_many_from_source' });
    expect(await store.findLobby(query(ns, { source_limit: 1, game_modes: ['squads'] }), pending(HOUR, '10.0.0.2'), null)).toMatchObject({ kind: 'joined' });
    expect(await store.joinLobby(made.lobby_id, pending(HOUR, '10.0.0.2'), T0, 1)).toEqual({ kind: 'too_many_from_source' });
  });

  it_('a find counts a lobby full at max_players, a join by id at max_players_direct', async () => {
    const ns = `ns-${randomUUID()}`;
    const l = lobby({ namespace_id: ns, max_players: 1, max_players_direct: 2, max_players_party: 7 });
    await store.insertLobby(l, pending());
    expect(await store.findLobby(query(ns), pending(), null)).toEqual({ kind: 'none' });
    expect(await store.joinLobby(l.lobby_id, pending(), T0, null)).toMatchObject({ kind: 'joined', players: 2 });
    expect(await store.joinLobby(l.lobby_id, pending(), T0, null)).toMatchObject({ kind: 'full', players: 2 });
    expect(await store.getLobby(l.lobby_id)).toMatchObject({ max_players: 1, max_players_direct: 2, max_players_party: 7, player_count: 2 });
  });

  it_('concurrent finds never put more players in a lobby than it holds', async () => {
    const ns = `ns-${randomUUID()}`;
    const l = lobby({ namespace_id: ns, max_players: 5 });
    await store.insertLobby(l, pending());
    const outcomes = await Promise.all(Array.from({ length: 24 }, (_, i) => store.findLobby(query(ns, { now: T0 + i }), pending(), null)));
    expect(outcomes.filter((o) => o.kind === 'joined')).toHaveLength(4);
    expect(outcomes.filter((o) => o.kind === 'none')).toHaveLength(20);
    expect((await store.getLobby(l.lobby_id))!.player_count).toBe(5);
  });

  it_('readyLobby makes a waiting lobby ready once and restarts its pending players\' registration; a lobby never ready stops at its deadline', async () => {
    const waiting = lobby({ ready_ts: NOT_READY, ready_deadline_ts: T0 + 300_000, idle_lifetime_ms: 10_000 });
    const creator = pending(60_000);
    await store.insertLobby(waiting, creator);
    expect((await store.getPlayer(creator.player_id))!.register_by_ts).toBe(NOT_READY + 60_000);
    const ready = await store.readyLobby(waiting.lobby_id, T0 + 5_000, 60_000);
    expect(ready).toMatchObject({ ready_ts: T0 + 5_000, ready_deadline_ts: null, idle_stop_ts: T0 + 15_000 });
    expect((await store.getPlayer(creator.player_id))!.register_by_ts).toBe(T0 + 65_000);
    // Again: harmless, the first ready stays.
    expect(await store.readyLobby(waiting.lobby_id, T0 + 9_000, 60_000)).toMatchObject({ ready_ts: T0 + 5_000 });
    expect(await store.readyLobby(randomUUID(), T0, 60_000)).toBeUndefined();
    const never = lobby({ ready_ts: NOT_READY, ready_deadline_ts: T0 + 300_000 });
    await store.insertLobby(never, pending());
    await store.expireIdle(T0 + 300_000);
    expect(await store.getLobby(never.lobby_id)).toMatchObject({ stop_ts: T0 + 300_000, failed: 1 });
  });

  it_('setReadyDeadline holds a waiting lobby\'s ready window (its build loading) and restarts it; a ready or stopped lobby keeps its own', async () => {
    const loading = lobby({ ready_ts: NOT_READY, ready_deadline_ts: T0 + 1_000 });
    const ready = lobby({ ready_ts: T0 + 10, ready_deadline_ts: null });
    const stopped = lobby({ ready_ts: NOT_READY, ready_deadline_ts: T0 + 1_000 });
    for (const l of [loading, ready, stopped]) await store.insertLobby(l, pending());
    await store.stopLobby(stopped.lobby_id, T0 + 5, 1, true);
    for (const l of [loading, ready, stopped]) await store.setReadyDeadline(l.lobby_id, null);
    // Held: its deadline passes and it runs on.
    await store.expireIdle(T0 + 5_000);
    expect(await store.getLobby(loading.lobby_id)).toMatchObject({ stop_ts: null, ready_deadline_ts: null });
    await store.setReadyDeadline(loading.lobby_id, T0 + 9_000);
    await store.setReadyDeadline(ready.lobby_id, T0 + 9_000);
    await store.expireIdle(T0 + 8_999);
    expect(await store.getLobby(loading.lobby_id)).toMatchObject({ stop_ts: null, ready_deadline_ts: T0 + 9_000 });
    expect(await store.getLobby(ready.lobby_id)).toMatchObject({ stop_ts: null, ready_deadline_ts: null });
    expect(await store.getLobby(stopped.lobby_id)).toMatchObject({ stop_ts: T0 + 5, ready_deadline_ts: T0 + 1_000 });
    await store.expireIdle(T0 + 9_000);
    expect(await store.getLobby(loading.lobby_id)).toMatchObject({ stop_ts: T0 + 9_000, failed: 1 });
  });

  it_('connectPlayer: once, in its own lobby, within its registration time; then in production\'s order of refusals', async () => {
    const l = lobby({ auto_created: 1 });
    const other = lobby();
    const p = pending(60_000);
    await store.insertLobby(l, p);
    await store.insertLobby(other, pending());
    expect(await store.connectPlayer(p.player_id, other.lobby_id, T0 + 1)).toBe('different_lobby');
    expect(await store.connectPlayer(p.player_id, l.lobby_id, T0 + 1)).toBe('connected');
    expect(await store.getPlayer(p.player_id)).toMatchObject({ connect_ts: T0 + 1, remove_ts: null });
    expect(await store.connectPlayer(p.player_id, l.lobby_id, T0 + 2)).toBe('already_connected');
    const late = pending(60_000);
    await store.joinLobby(l.lobby_id, late, T0, null);
    expect(await store.connectPlayer(late.player_id, l.lobby_id, T0 + 2_000 + 60_000)).toBe('expired');
    const gone = pending();
    await store.joinLobby(l.lobby_id, gone, T0, null);
    expect(await store.disconnectPlayer(gone.player_id, l.lobby_id, T0 + 3)).toBe('removed');
    expect(await store.connectPlayer(gone.player_id, l.lobby_id, T0 + 4)).toBe('removed');
    expect(await store.connectPlayer(randomUUID(), l.lobby_id, T0 + 4)).toBe('removed');
  });

  it_('pending players past their registration time leave, and a lobby, made by find or by create, stops when its last player has', async () => {
    const made = lobby({ auto_created: 1, ready_ts: T0 });
    const custom = lobby({ auto_created: 0, ready_ts: T0 });
    const kept = lobby({ auto_created: 0, ready_ts: T0 });
    await store.insertLobby(made, pending(60_000));
    await store.insertLobby(custom, pending(60_000));
    await store.insertLobby(kept, pending(60_000));
    await store.joinLobby(kept.lobby_id, connected(), T0, null);
    await store.expireIdle(T0 + 59_999);
    expect((await store.getLobby(made.lobby_id))!.stop_ts).toBeNull();
    await store.expireIdle(T0 + 60_000);
    expect(await store.getLobby(made.lobby_id)).toMatchObject({ stop_ts: T0 + 60_000, player_count: 0, failed: 0 });
    expect(await store.getLobby(custom.lobby_id)).toMatchObject({ stop_ts: T0 + 60_000, player_count: 0, exit_code: 0, failed: 0 });
    // A lobby someone is still in runs on.
    expect(await store.getLobby(kept.lobby_id)).toMatchObject({ stop_ts: null, player_count: 1 });
  });

  it_('disconnectPlayer: removes once, stops the lobby (a custom one too) when it empties, refuses another lobby\'s player', async () => {
    const made = lobby({ auto_created: 0 });
    const p = connected();
    await store.insertLobby(made, p);
    const q = connected();
    await store.joinLobby(made.lobby_id, q, T0, null);
    expect(await store.disconnectPlayer(p.player_id, randomUUID(), T0 + 1)).toBe('different_lobby');
    expect(await store.disconnectPlayer(p.player_id, made.lobby_id, T0 + 1)).toBe('removed');
    expect(await store.disconnectPlayer(p.player_id, made.lobby_id, T0 + 2)).toBe('removed');
    expect(await store.getLobby(made.lobby_id)).toMatchObject({ stop_ts: null, player_count: 1 });
    expect(await store.disconnectPlayer(q.player_id, made.lobby_id, T0 + 3)).toBe('removed');
    expect(await store.getLobby(made.lobby_id)).toMatchObject({ stop_ts: T0 + 3, player_count: 0 });
  });

  it_('setLobbyState keeps the JSON as given; listLobbies answers the public running lobbies with their connected players', async () => {
    const ns = `ns-${randomUUID()}`;
    const a = lobby({ namespace_id: ns, create_ts: T0 });
    const b = lobby({ namespace_id: ns, create_ts: T0 + 1, publicity: 'private' });
    const c = lobby({ namespace_id: ns, create_ts: T0 + 2 });
    await store.insertLobby(a, connected());
    await store.insertLobby(b, connected());
    await store.insertLobby(c, pending());
    await store.setLobbyState(a.lobby_id, '{"round": 2}');
    const listed = await store.listLobbies(ns);
    expect(listed.map((l) => [l.lobby_id, l.connected, l.state])).toEqual([
      [a.lobby_id, 1, '{"round": 2}'],
      [c.lobby_id, 0, null],
    ]);
    await store.setLobbyState(a.lobby_id, null);
    expect((await store.getLobby(a.lobby_id))!.state).toBeNull();
  });

  it_('insertBuild: false and nothing written when the game already uses the tag; another game may use it', async () => {
    const game = randomUUID();
    const first = build(game, 'server:v1', BIG);
    expect(await store.insertBuild(first.build, first.upload)).toBe(true);
    const again = build(game, 'server:v1');
    expect(await store.insertBuild(again.build, again.upload)).toBe(false);
    expect(await store.getUpload(again.upload.upload_id)).toBeUndefined();
    const other = build(randomUUID(), 'server:v1');
    expect(await store.insertBuild(other.build, other.upload)).toBe(true);
    expect(await store.listBuilds(game)).toEqual([first.build]);
    expect(await store.getUpload(first.upload.upload_id)).toEqual({ ...first.upload, game_id: game, state: 'pending', claim_ts: null });
  });

  it_('concurrent inserts of one tag: exactly one build', async () => {
    const game = randomUUID();
    const results = await Promise.all(Array.from({ length: 12 }, () => build(game, 'race:v1')).map((b) => store.insertBuild(b.build, b.upload)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.listBuilds(game)).toHaveLength(1);
  });

  it_('claimUpload: one claim at a time, taken over only when stale; touchClaim keeps it fresh; release frees it', async () => {
    const { build: b, upload } = build(randomUUID(), 'claim:v1');
    await store.insertBuild(b, upload);
    const id = upload.upload_id;
    expect(await store.claimUpload(id, T0, 60_000)).toBe(true);
    expect(await store.getUpload(id)).toMatchObject({ state: 'assembling', claim_ts: T0 });
    expect(await store.claimUpload(id, T0 + 30_000, 60_000)).toBe(false);
    await store.touchClaim(id, T0 + 50_000);
    expect(await store.claimUpload(id, T0 + 100_000, 60_000)).toBe(false);
    // Stale: its holder stopped touching it more than staleMs ago.
    expect(await store.claimUpload(id, T0 + 111_000, 60_000)).toBe(true);
    await store.releaseUpload(id);
    expect(await store.getUpload(id)).toMatchObject({ state: 'pending', claim_ts: null });
  });

  it_('concurrent claims: exactly one wins', async () => {
    const { build: b, upload } = build(randomUUID(), 'claims:v1');
    await store.insertBuild(b, upload);
    const wins = await Promise.all(Array.from({ length: 16 }, () => store.claimUpload(upload.upload_id, T0, 60_000)));
    expect(wins.filter(Boolean)).toHaveLength(1);
  });

  it_('completeUpload marks the upload and its build complete; a complete upload cannot be claimed', async () => {
    const game = randomUUID();
    const { build: b, upload } = build(game, 'done:v1', 10);
    await store.insertBuild(b, upload);
    const row = (await store.getUpload(upload.upload_id))!;
    expect(await store.claimUpload(row.upload_id, T0, 60_000)).toBe(true);
    await store.completeUpload(row, 'ab'.repeat(32), BIG, T0 + 9);
    expect(await store.getUpload(row.upload_id)).toMatchObject({ state: 'complete' });
    expect((await store.listBuilds(game))[0]).toMatchObject({ complete: 1, sha256: 'ab'.repeat(32), content_length: BIG, complete_ts: T0 + 9 });
    expect(await store.claimUpload(row.upload_id, T0 + 10_000_000, 60_000)).toBe(false);
  });

  it_('listBuilds: newest first; getBuild reads one; buildTagged one of its game by tag; newestCompleteBuild the newest complete', async () => {
    const game = randomUUID();
    const old = build(game, 'list:v1');
    const recent = build(game, 'list:v2');
    recent.build.create_ts = T0 + 1;
    await store.insertBuild(old.build, old.upload);
    await store.insertBuild(recent.build, recent.upload);
    expect((await store.listBuilds(game)).map((b) => b.image_tag)).toEqual(['list:v2', 'list:v1']);
    // One read alone, whatever its game.
    expect(await store.getBuild(old.build.build_id)).toEqual((await store.listBuilds(game))[1]);
    expect(await store.getBuild(randomUUID())).toBeUndefined();
    expect(await store.buildTagged(game, 'list:v1')).toEqual(await store.getBuild(old.build.build_id));
    expect([await store.buildTagged(game, 'list:v9'), await store.buildTagged(randomUUID(), 'list:v1')]).toEqual([undefined, undefined]);
    // None complete; then the older one (the newer still pushing); then, of two at one time, the first by id's bytes.
    expect(await store.newestCompleteBuild(game)).toBeUndefined();
    const complete = async (b: { upload: NewUpload }, at: number) => {
      const row = (await store.getUpload(b.upload.upload_id))!;
      await store.claimUpload(row.upload_id, at, 60_000);
      await store.completeUpload(row, 'ab'.repeat(32), 10, at);
    };
    await complete(old, T0 + 2);
    expect((await store.newestCompleteBuild(game))?.build_id).toBe(old.build.build_id);
    const twins = [build(game, 'list:a'), build(game, 'list:b')];
    twins[0]!.build.build_id = `b${randomUUID().slice(1)}`;
    twins[1]!.build.build_id = `a${randomUUID().slice(1)}`;
    for (const t of twins) {
      t.build.create_ts = T0 + 5;
      t.upload.build_id = t.build.build_id;
      await store.insertBuild(t.build, t.upload);
      await complete(t, T0 + 6);
    }
    expect((await store.newestCompleteBuild(game))?.build_id).toBe(twins[1]!.build.build_id);
    expect(await store.newestCompleteBuild(randomUUID())).toBeUndefined();
  });

  it_('recordPart keeps the last write of a part; listParts answers them in order', async () => {
    const { build: b, upload } = build(randomUUID(), 'parts:v1');
    await store.insertBuild(b, upload);
    await store.recordPart(upload.upload_id, 2, 4, 'b'.repeat(64), '2049:17:4:1', T0);
    await store.recordPart(upload.upload_id, 1, 4, 'a'.repeat(64), '2049:16:4:1', T0);
    await store.recordPart(upload.upload_id, 2, 3, 'c'.repeat(64), '2049:18:3:2', T0 + 1);
    expect(await store.listParts(upload.upload_id)).toEqual([
      { part_number: 1, size: 4, sha256: 'a'.repeat(64), stamp: '2049:16:4:1' },
      { part_number: 2, size: 3, sha256: 'c'.repeat(64), stamp: '2049:18:3:2' },
    ]);
  });

  it_('insertExport prunes expired exports; getExport reads one back', async () => {
    const old = randomUUID();
    const fresh = randomUUID();
    await store.insertExport(old, 'g', 'a,b\n', T0, T0 + 10);
    await store.insertExport(fresh, 'g', 'lobby_id\nx\n', T0 + 100, T0 + 3_600_000);
    expect(await store.getExport(old)).toBeUndefined();
    expect(await store.getExport(fresh)).toEqual({ csv: 'lobby_id\nx\n', expires_ts: T0 + 3_600_000 });
  });

  it_('appendLobbyLogs stamps lines in increasing microseconds per stream, even many within one millisecond', async () => {
    const id = randomUUID();
    const bytes = [Buffer.from('first'), Buffer.from([0, 0xff, 0x1b, 0x5b]), Buffer.from('')];
    await store.appendLobbyLogs(id, 'std_out', bytes, T0);
    await store.appendLobbyLogs(id, 'std_out', [Buffer.from('later, same ms')], T0);
    await store.appendLobbyLogs(id, 'std_err', [Buffer.from('err')], T0 - 5);
    const out = await store.lobbyLogs(id, 'std_out', 100);
    expect(out.map((l) => l.line)).toEqual([...bytes, Buffer.from('later, same ms')]);
    expect(out.map((l) => l.ts)).toEqual([T0 * 1000, T0 * 1000 + 1, T0 * 1000 + 2, T0 * 1000 + 3]);
    // Streams are apart: std_err has its own stamps, from its own clock reading.
    expect(await store.lobbyLogs(id, 'std_err', 100)).toEqual([{ ts: (T0 - 5) * 1000, line: Buffer.from('err') }]);
    // A clock that goes back never stamps a line before the last one.
    await store.appendLobbyLogs(id, 'std_out', [Buffer.from('clock went back')], T0 - 60_000);
    expect((await store.lobbyLogs(id, 'std_out', 1))[0]).toEqual({ ts: T0 * 1000 + 4, line: Buffer.from('clock went back') });
    expect(await store.lobbyLogs(randomUUID(), 'std_out', 100)).toEqual([]);
  });

  it_('appendLobbyLogs with a batch stamp: stamped from it, and a batch the stream already took is skipped', async () => {
    const id = randomUUID();
    const first = T0 * 1000 + 500;
    await store.appendLobbyLogs(id, 'std_out', [Buffer.from('a'), Buffer.from('b')], T0, undefined, first);
    // The same batch again (its answer was lost): nothing written twice.
    await store.appendLobbyLogs(id, 'std_out', [Buffer.from('a'), Buffer.from('b')], T0, undefined, first);
    // The next batch, past the stamps of the one before it; the same lines are new lines.
    await store.appendLobbyLogs(id, 'std_out', [Buffer.from('a')], T0, undefined, first + 2);
    expect(await store.lobbyLogs(id, 'std_out', 100)).toEqual([
      { ts: first, line: Buffer.from('a') },
      { ts: first + 1, line: Buffer.from('b') },
      { ts: first + 2, line: Buffer.from('a') },
    ]);
    // Another stream's stamps are its own.
    await store.appendLobbyLogs(id, 'std_err', [Buffer.from('e')], T0, undefined, first);
    expect(await store.lobbyLogs(id, 'std_err', 100)).toEqual([{ ts: first, line: Buffer.from('e') }]);
  });

  it_('lobbyLogs: the most recent N oldest first; after a stamp, the next N', async () => {
    const id = randomUUID();
    const lines = Array.from({ length: 10 }, (_, i) => Buffer.from(`line ${i}`));
    await store.appendLobbyLogs(id, 'std_out', lines, T0);
    expect((await store.lobbyLogs(id, 'std_out', 3)).map((l) => l.line.toString())).toEqual(['line 7', 'line 8', 'line 9']);
    const after = await store.lobbyLogs(id, 'std_out', 4, T0 * 1000 + 2);
    expect(after.map((l) => l.line.toString())).toEqual(['line 3', 'line 4', 'line 5', 'line 6']);
    expect(await store.lobbyLogs(id, 'std_out', 4, T0 * 1000 + 9)).toEqual([]);
  });

  it_('appendLobbyLogs keeps a stream within its bounds, dropping the oldest lines first, and cuts long lines', async () => {
    const id = randomUUID();
    // By lines: 5 at most.
    for (let i = 0; i < 8; i++) await store.appendLobbyLogs(id, 'std_out', [Buffer.from(`n${i}`)], T0 + i, { lines: 5, bytes: 1000 });
    expect((await store.lobbyLogs(id, 'std_out', 100)).map((l) => l.line.toString())).toEqual(['n3', 'n4', 'n5', 'n6', 'n7']);
    // By bytes: 10 at most; one 8-byte line pushes out as many small ones as it takes, in one append.
    await store.appendLobbyLogs(id, 'std_err', ['a', 'b', 'c', 'd', 'e'].map((c) => Buffer.from(c)), T0, { lines: 100, bytes: 10 });
    await store.appendLobbyLogs(id, 'std_err', [Buffer.from('12345678')], T0 + 1, { lines: 100, bytes: 10 });
    expect((await store.lobbyLogs(id, 'std_err', 100)).map((l) => l.line.toString())).toEqual(['d', 'e', '12345678']);
    // Many pages of small lines dropped at once (past the trimming page size).
    const many = randomUUID();
    await store.appendLobbyLogs(many, 'std_out', Array.from({ length: 1500 }, (_, i) => Buffer.from(String(i))), T0, { lines: 2000, bytes: 1_000_000 });
    await store.appendLobbyLogs(many, 'std_out', [Buffer.alloc(900, 'x')], T0 + 1, { lines: 2000, bytes: 1000 });
    const kept = await store.lobbyLogs(many, 'std_out', 5000);
    expect(kept.at(-1)!.line.length).toBe(900);
    expect(kept.reduce((sum, l) => sum + l.line.length, 0)).toBeLessThanOrEqual(1000);
    expect(kept[0]!.line.toString()).toBe(String(1500 - (kept.length - 1)));
    // A line past MAX_LOG_LINE_BYTES is cut to it.
    await store.appendLobbyLogs(id, 'std_out', [Buffer.alloc(MAX_LOG_LINE_BYTES + 10, 'y')], T0 + 100);
    expect((await store.lobbyLogs(id, 'std_out', 1))[0]!.line.length).toBe(MAX_LOG_LINE_BYTES);
  });

  it_('appendLobbyLogs stores an append as rows of lines: reads, pages and trims cross their edges line by line; each row counted rowBytes', async () => {
    const id = randomUUID();
    // 3,000 short lines and 6 of 16 KiB in one append: more lines and more bytes than one row holds.
    const big = Array.from({ length: 6 }, (_, i) => Buffer.alloc(MAX_LOG_LINE_BYTES, String(i)));
    const sent = [...Array.from({ length: 3000 }, (_, i) => Buffer.from(`l${i}`)), ...big];
    await store.appendLobbyLogs(id, 'std_out', sent, T0, { lines: 5000, bytes: 1_000_000 });
    const all = await store.lobbyLogs(id, 'std_out', 5000);
    expect(all.map((l) => l.line)).toEqual(sent);
    expect(all.map((l) => l.ts)).toEqual(sent.map((_, i) => T0 * 1000 + i));
    expect((await store.lobbyLogs(id, 'std_out', 2)).map((l) => l.line)).toEqual(big.slice(-2));
    // Paged by stamp, 97 at a time: every line once, in order.
    const paged: LogLine[] = [];
    for (let after = -1; ; ) {
      const page = await store.lobbyLogs(id, 'std_out', 97, after);
      if (page.length === 0) break;
      expect(page.length).toBeLessThanOrEqual(97);
      paged.push(...page);
      after = page.at(-1)!.ts;
    }
    expect(paged).toEqual(all);
    // Trimmed to 1,200 lines: the oldest go, from the middle of a row.
    await store.appendLobbyLogs(id, 'std_out', [Buffer.from('last')], T0 + 1, { lines: 1200, bytes: 1_000_000 });
    const kept = await store.lobbyLogs(id, 'std_out', 5000);
    expect(kept.map((l) => l.line)).toEqual([...sent.slice(-1199), Buffer.from('last')]);
    // A row costs rowBytes beside its lines: 2 + 2 + 50, then 60 + 50 is past 120, and the first row goes whole.
    const rows = randomUUID();
    const bounds = { lines: 100, bytes: 120, rowBytes: 50 };
    await store.appendLobbyLogs(rows, 'std_err', [Buffer.from('aa'), Buffer.from('bb')], T0, bounds);
    expect(await store.lobbyLogs(rows, 'std_err', 10)).toHaveLength(2);
    await store.appendLobbyLogs(rows, 'std_err', [Buffer.alloc(60, 'c')], T0 + 1, bounds);
    expect((await store.lobbyLogs(rows, 'std_err', 10)).map((l) => l.line.length)).toEqual([60]);
  });

  it_('purgeGame removes the output of the namespace\'s lobbies, and only theirs', async () => {
    const ns = `ns-${randomUUID()}`;
    const gone = lobby({ namespace_id: ns });
    const kept = lobby();
    await store.insertLobby(gone, connected());
    await store.insertLobby(kept, connected());
    for (const l of [gone, kept]) await store.appendLobbyLogs(l.lobby_id, 'std_out', [Buffer.from('hello')], T0);
    await store.purgeGame(randomUUID(), [ns]);
    expect(await store.lobbyLogs(gone.lobby_id, 'std_out', 10)).toEqual([]);
    expect(await store.lobbyLogs(kept.lobby_id, 'std_out', 10)).toHaveLength(1);
  });

  it_('lobbySamples: what setLobbySamples kept for a lobby, the newest replacing the last; purged with its game', async () => {
    const ns = `ns-${randomUUID()}`;
    const gone = lobby({ namespace_id: ns });
    const kept = lobby();
    for (const l of [gone, kept]) await store.insertLobby(l, pending());
    expect(await store.lobbySamples(kept.lobby_id)).toBeUndefined();
    await store.setLobbySamples(kept.lobby_id, '[{"ts":1,"cpu":2.5,"memory":1048576}]');
    await store.setLobbySamples(kept.lobby_id, '[{"ts":1,"cpu":2.5,"memory":1048576},{"ts":2,"cpu":99.5,"memory":2097152}]');
    await store.setLobbySamples(gone.lobby_id, '[]');
    expect(await store.lobbySamples(kept.lobby_id)).toBe('[{"ts":1,"cpu":2.5,"memory":1048576},{"ts":2,"cpu":99.5,"memory":2097152}]');
    expect(await store.lobbySamples(gone.lobby_id)).toBe('[]');
    await store.purgeGame(randomUUID(), [ns]);
    expect(await store.lobbySamples(gone.lobby_id)).toBeUndefined();
    expect(await store.lobbySamples(kept.lobby_id)).toMatch(/^\[\{"ts":1/);
  });

  it_('ownedLobbies: the running lobbies of one owner, oldest first, with their processes; setLobbyServer records the server', async () => {
    const owner = `r-${randomUUID()}`;
    const first = lobby({ owner, owner_pid: 4242, owner_start: T0 + BIG, create_ts: T0 });
    const second = lobby({ owner, owner_pid: 4242, owner_start: T0 + BIG, create_ts: T0 + 1 });
    const stopped = lobby({ owner, owner_pid: 4242, owner_start: T0 + BIG });
    const others = lobby({ owner: `r-${randomUUID()}`, owner_pid: 1, owner_start: T0 });
    for (const l of [second, first, stopped, others, lobby()]) await store.insertLobby(l, pending());
    await store.stopLobby(stopped.lobby_id, T0 + 5, 0, false);
    await store.setLobbyServer(second.lobby_id, 31337, T0 + BIG + 1);
    expect(await store.ownedLobbies(owner)).toEqual([first, { ...second, server_pid: 31337, server_start: T0 + BIG + 1 }]);
    expect(await store.getLobby(second.lobby_id)).toMatchObject({ server_pid: 31337, server_start: T0 + BIG + 1 });
    expect(await store.ownedLobbies(`r-${randomUUID()}`)).toEqual([]);
    // A lobby stopped by its owner's recovery is no longer its.
    await store.stopLobby(first.lobby_id, T0 + 6, 137, true);
    expect((await store.ownedLobbies(owner)).map((l) => l.lobby_id)).toEqual([second.lobby_id]);
  });

  it_('touchReplica / replicaSeen: the latest time a replica said its records were current, never going back', async () => {
    const replica = `r-${randomUUID()}`;
    expect(await store.replicaSeen(replica)).toBeUndefined();
    await store.touchReplica(replica, T0 + BIG);
    await store.touchReplica(replica, T0 + 5);
    expect(await store.replicaSeen(replica)).toBe(T0 + BIG);
    await store.touchReplica(replica, T0 + BIG + 1);
    expect(await store.replicaSeen(replica)).toBe(T0 + BIG + 1);
  });

  it_('findLobby hands out a lobby whose server a replica runs only while that replica is current (served_since)', async () => {
    const ns = `ns-${randomUUID()}`;
    const owner = `r-${randomUUID()}`;
    const served = lobby({ namespace_id: ns, owner, owner_pid: 1, owner_start: T0, player_count: 1, max_players: 8 });
    const byHand = lobby({ namespace_id: ns, max_players: 8 });
    // The fuller one is the served lobby: it wins only while its owner said it was current at served_since or later.
    await store.insertLobby(served, pending());
    for (let i = 0; i < 3; i++) await store.joinLobby(served.lobby_id, pending(), T0, null);
    await store.insertLobby(byHand, pending());
    const find = (servedSince: number) => store.findLobby(query(ns, { served_since: servedSince }), pending(), null);
    // Never said: not handed out; the lobby no emulator runs is.
    expect(await find(0)).toMatchObject({ kind: 'joined', lobby: { lobby_id: byHand.lobby_id } });
    await store.touchReplica(owner, T0 - 10);
    expect(await find(T0 - 10)).toMatchObject({ kind: 'joined', lobby: { lobby_id: served.lobby_id } });
    expect(await find(T0 - 9)).toMatchObject({ kind: 'joined', lobby: { lobby_id: byHand.lobby_id } });
  });

  it_('purgeStoppedLogs removes the output and samples of lobbies stopped before the time, a few lobbies a call', async () => {
    const old = [lobby(), lobby(), lobby()];
    const recent = lobby();
    const running = lobby();
    for (const l of [...old, recent, running]) {
      await store.insertLobby(l, pending());
      await store.appendLobbyLogs(l.lobby_id, 'std_out', [Buffer.from('out')], T0);
      await store.appendLobbyLogs(l.lobby_id, 'std_err', [Buffer.from('err')], T0);
      await store.setLobbySamples(l.lobby_id, '[]');
    }
    for (const l of old) await store.stopLobby(l.lobby_id, T0 + 10, 0, false);
    await store.stopLobby(recent.lobby_id, T0 + 100, 0, false);
    // Other lobbies of the store, stopped long ago, may be purged here too: only these are counted on.
    let removed = 0;
    for (let n = await store.purgeStoppedLogs(T0 + 50, 2); n > 0; n = await store.purgeStoppedLogs(T0 + 50, 2)) {
      expect(n).toBeLessThanOrEqual(2);
      removed += n;
    }
    expect(removed).toBeGreaterThanOrEqual(3);
    for (const l of old) {
      expect(await store.lobbyLogs(l.lobby_id, 'std_out', 10)).toEqual([]);
      expect(await store.lobbyLogs(l.lobby_id, 'std_err', 10)).toEqual([]);
      expect(await store.lobbySamples(l.lobby_id)).toBeUndefined();
      // The lobby itself stays (its history).
      expect(await store.getLobby(l.lobby_id)).toMatchObject({ stop_ts: T0 + 10 });
    }
    for (const l of [recent, running]) {
      expect(await store.lobbyLogs(l.lobby_id, 'std_out', 10)).toHaveLength(1);
      expect(await store.lobbySamples(l.lobby_id)).toBe('[]');
    }
  });

  it_('ping answers while open, and fails once closed', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
    const other = await open();
    await other.close();
    await expect(other.ping()).rejects.toThrow();
  });

  /** A created game, unique in the store, expiring in an hour unless told. */
  function game(overrides: Partial<GameRow> = {}): GameRow {
    const id = randomUUID();
    return { game_id: id, namespace_id: `ns-${id}`, name: 'ci', game_modes: '["default"]', regions: '["lnd-atl"]', create_ts: T0, expire_ts: T0 + HOUR, delete_ts: null, ...overrides };
  }

  it_('insertGame and getGame; listGames answers the games not being deleted, oldest first; claimGameDeletion succeeds once', async () => {
    const older = game({ create_ts: T0 - 2, expire_ts: T0 + 100 * HOUR });
    const newer = game({ create_ts: T0 - 1, expire_ts: T0 + 100 * HOUR });
    await store.insertGame(newer);
    await store.insertGame(older);
    expect(await store.getGame(older.game_id)).toEqual(older);
    expect(await store.getGame(randomUUID())).toBeUndefined();
    const ids = (await store.listGames()).map((g) => g.game_id);
    expect(ids.indexOf(older.game_id)).toBeGreaterThanOrEqual(0);
    expect(ids.indexOf(older.game_id)).toBeLessThan(ids.indexOf(newer.game_id));
    expect(await store.claimGameDeletion(older.game_id, T0 + 5)).toBe(true);
    expect(await store.claimGameDeletion(older.game_id, T0 + 6)).toBe(false);
    expect(await store.claimGameDeletion(randomUUID(), T0 + 6)).toBe(false);
    // Gone to every list, but still read by id (with when its deletion began) until purged.
    expect((await store.listGames()).map((g) => g.game_id)).not.toContain(older.game_id);
    expect(await store.getGame(older.game_id)).toEqual({ ...older, delete_ts: T0 + 5 });
    await store.purgeGame(older.game_id, [older.namespace_id]);
    expect(await store.getGame(older.game_id)).toBeUndefined();
  });

  it_('insertVersion refuses a display name the game has; getVersion, listVersions oldest first; reserveVersionName counts per game and day; purgeGame takes them', async () => {
    const g = game();
    const other = game();
    const version = (gameId: string, name: string, create_ts: number) => ({ version_id: randomUUID(), game_id: gameId, display_name: name, config: `{"n":"${name}"}`, create_ts });
    const [v2, v1] = [version(g.game_id, 'two', T0 + 2), version(g.game_id, 'one', T0 + 1)];
    expect(await store.insertVersion(v2)).toBe(true);
    expect(await store.insertVersion(v1)).toBe(true);
    expect(await store.insertVersion(version(g.game_id, 'one', T0 + 3))).toBe(false);
    // Another game may use the name.
    expect(await store.insertVersion(version(other.game_id, 'one', T0 + 3))).toBe(true);
    expect(await store.getVersion(v1.version_id)).toEqual(v1);
    expect(await store.getVersion(randomUUID())).toBeUndefined();
    // A name looked up alone, in its game only.
    expect([await store.versionNamed(g.game_id, 'one'), await store.versionNamed(g.game_id, 'three'), await store.versionNamed(randomUUID(), 'one')]).toEqual([true, false, false]);
    // Without their configs (a list reads them all); getVersion reads one whole.
    const listed = ({ config: _config, ...rest }: VersionRow) => rest;
    expect(await store.listVersions(g.game_id)).toEqual([listed(v1), listed(v2)]);
    expect(await store.reserveVersionName(g.game_id, '2026.12.02')).toBe(1);
    expect(await store.reserveVersionName(g.game_id, '2026.12.02')).toBe(2);
    expect(await store.reserveVersionName(g.game_id, '2026.12.03')).toBe(1);
    expect(await store.reserveVersionName(other.game_id, '2026.12.02')).toBe(1);
    await store.purgeGame(g.game_id, [g.namespace_id]);
    expect(await store.listVersions(g.game_id)).toEqual([]);
    expect(await store.reserveVersionName(g.game_id, '2026.12.02')).toBe(1);
    expect((await store.listVersions(other.game_id)).map((v) => v.display_name)).toEqual(['one']);
  });

  it_('insertNamespace refuses a name id the game has; putNamespace writes a row whole; deployVersion appends history unless the version is the same; purgeGame takes them', async () => {
    const g = game();
    const other = game();
    const ns = (gameId: string, nameId: string, create_ts: number) => ({
      namespace_id: randomUUID(), game_id: gameId, name_id: nameId, display_name: nameId.toUpperCase(), version_id: 'v0', create_ts, lobby_count_max: 128, max_players_per_client: null,
    });
    const [qa, dev] = [ns(g.game_id, 'qa', T0 + 2), ns(g.game_id, 'dev', T0 + 1)];
    expect(await store.insertNamespace(qa)).toBe(true);
    expect(await store.insertNamespace(dev)).toBe(true);
    expect(await store.insertNamespace(ns(g.game_id, 'qa', T0 + 3))).toBe(false);
    expect(await store.insertNamespace({ ...ns(other.game_id, 'x', T0), namespace_id: qa.namespace_id })).toBe(false);
    expect(await store.insertNamespace(ns(other.game_id, 'qa', T0 + 3))).toBe(true);
    expect(await store.getNamespace(qa.namespace_id)).toEqual(qa);
    expect(await store.getNamespace(randomUUID())).toBeUndefined();
    expect(await store.listNamespaces(g.game_id)).toEqual([dev, qa]);
    // A namespace a game starts with is written on its first change.
    const staging = ns(g.game_id, 'staging', T0);
    await store.putNamespace({ ...staging, lobby_count_max: 5, max_players_per_client: 2 });
    await store.putNamespace({ ...staging, display_name: 'Staging', lobby_count_max: 6, max_players_per_client: 3 });
    expect(await store.getNamespace(staging.namespace_id)).toEqual({ ...staging, display_name: 'Staging', lobby_count_max: 6, max_players_per_client: 3 });
    expect(await store.deployVersion({ ...qa, version_id: 'v1' }, T0 + 10)).toBe(true);
    expect(await store.deployVersion({ ...qa, version_id: 'v1' }, T0 + 11)).toBe(false);
    // Deploys at once: each a row of its own, none lost.
    expect(await Promise.all(['v2', 'v3', 'v4'].map((v, i) => store.deployVersion({ ...qa, version_id: v }, T0 + 20 + i)))).toEqual([true, true, true]);
    const history = await store.namespaceHistory(qa.namespace_id, 32);
    expect(history).toHaveLength(4);
    expect(history[3]).toEqual({ namespace_id: qa.namespace_id, version_id: 'v1', deploy_ts: T0 + 10 });
    expect((await store.getNamespace(qa.namespace_id))!.version_id).toBe(history[0]!.version_id);
    expect(await store.namespaceHistory(qa.namespace_id, 2)).toEqual(history.slice(0, 2));
    // A deploy to a namespace with no row yet writes it.
    expect(await store.deployVersion({ ...dev, namespace_id: randomUUID(), name_id: 'fresh' }, T0 + 30)).toBe(true);
    await store.purgeGame(g.game_id, [g.namespace_id]);
    expect(await store.listNamespaces(g.game_id)).toEqual([]);
    expect(await store.namespaceHistory(qa.namespace_id, 32)).toEqual([]);
    expect((await store.listNamespaces(other.game_id)).map((n) => n.name_id)).toEqual(['qa']);
  });

  it_('claimExpiredGames claims each expired game once, and takes up again a deletion begun before now - staleMs, once', async () => {
    const expired = game({ expire_ts: T0 + 1_000 });
    const current = game({ expire_ts: T0 + 100 * HOUR });
    await store.insertGame(expired);
    await store.insertGame(current);
    const sweep = await store.claimExpiredGames(T0 + 2_000, 60_000);
    expect(sweep.expired).toContain(expired.game_id);
    expect(sweep.expired).not.toContain(current.game_id);
    expect(await store.claimExpiredGames(T0 + 3_000, 60_000)).not.toMatchObject({ expired: expect.arrayContaining([expired.game_id]) });
    expect((await store.claimExpiredGames(T0 + 3_000, 60_000)).stale).not.toContain(expired.game_id);
    const later = await store.claimExpiredGames(T0 + 62_001, 60_000);
    expect(later.stale).toContain(expired.game_id);
    expect((await store.claimExpiredGames(T0 + 62_002, 60_000)).stale).not.toContain(expired.game_id);
    expect((await store.getGame(expired.game_id))!.delete_ts).toBe(T0 + 62_001);
  });

  it_('gameObjects lists a game\'s builds and exports; staleUploads the builds never completed; deleteBuild deletes one once', async () => {
    const g = game();
    await store.insertGame(g);
    const done = build(g.game_id, 'done');
    const open = build(g.game_id, 'open');
    expect(await store.insertBuild(done.build, done.upload)).toBe(true);
    expect(await store.insertBuild(open.build, open.upload)).toBe(true);
    await store.completeUpload((await store.getUpload(done.upload.upload_id))!, 'ab'.repeat(32), 10, T0 + 1);
    const exportId = randomUUID();
    await store.insertExport(exportId, g.game_id, 'csv', T0, T0 + HOUR);
    const objects = await store.gameObjects(g.game_id);
    expect(objects.game_id).toBe(g.game_id);
    expect(objects.builds).toHaveLength(2);
    expect(objects.builds).toEqual(expect.arrayContaining([done, open].map((b) => ({ build_id: b.build.build_id, upload_id: b.upload.upload_id }))));
    expect(objects.export_ids).toEqual([exportId]);
    expect(await store.gameObjects(randomUUID())).toMatchObject({ builds: [], export_ids: [] });

    const stale = await store.staleUploads(T0 + 1);
    const openObject = { game_id: g.game_id, build_id: open.build.build_id, upload_id: open.upload.upload_id };
    expect(stale).toContainEqual(openObject);
    expect(stale.map((b) => b.build_id)).not.toContain(done.build.build_id);
    expect((await store.staleUploads(T0)).map((b) => b.build_id)).not.toContain(open.build.build_id);

    await store.recordPart(open.upload.upload_id, 1, 4, 'cd'.repeat(32), '2049:16:4:1', T0);
    expect(await store.deleteBuild(open.build.build_id)).toEqual(openObject);
    expect(await store.deleteBuild(open.build.build_id)).toBeUndefined();
    expect(await store.getUpload(open.upload.upload_id)).toBeUndefined();
    expect(await store.listParts(open.upload.upload_id)).toEqual([]);
    expect((await store.listBuilds(g.game_id)).map((b) => b.build_id)).toEqual([done.build.build_id]);
    // Its tag is free again.
    const again = build(g.game_id, 'open');
    expect(await store.insertBuild(again.build, again.upload)).toBe(true);
  });

  it_('currentLobby answers the lobby as expireIdle at that time leaves it', async () => {
    const l = lobby({ idle_lifetime_ms: 1_000, idle_stop_ts: T0 + 3_000 });
    await store.insertLobby(l, connected());
    expect(await store.currentLobby(l.lobby_id, T0 + 2_000)).toEqual(l);
    expect(await store.currentLobby(l.lobby_id, T0 + 4_000)).toEqual({ ...l, stop_ts: T0 + 3_000, exit_code: 0, failed: 0 });
    expect(await store.currentLobby(randomUUID(), T0 + 4_000)).toBeUndefined();
  });
});

describe.skipIf(!PG_PRESENT)('PostgreSQL only', () => {
  it('replicas opening a fresh database at once migrate it once, to the current version, and share one secret', async () => {
    const url = await createTestDatabase();
    const stores = await Promise.all(Array.from({ length: 4 }, () => PostgresStore.open({ connectionString: url, max: 2 })));
    try {
      expect(await queryDatabase(url, 'SELECT version FROM schema_version')).toEqual([{ version: SCHEMA_VERSION }]);
      const secrets = await Promise.all(stores.map((s) => s.secret()));
      expect(secrets[0]).toHaveLength(32);
      for (const s of secrets) expect(s.equals(secrets[0]!)).toBe(true);
    } finally {
      await Promise.all(stores.map((s) => s.close()));
    }
    // Opening again finds it current and changes nothing.
    const again = await PostgresStore.open({ connectionString: url });
    await again.close();
    expect(await queryDatabase(url, 'SELECT version FROM schema_version')).toEqual([{ version: SCHEMA_VERSION }]);
  });

  it('refuses a database migrated by a newer version, touching nothing', async () => {
    const url = await createTestDatabase();
    await (await PostgresStore.open({ connectionString: url })).close();
    await queryDatabase(url, 'UPDATE schema_version SET version = $1', [SCHEMA_VERSION + 1]);
    const err = await PostgresStore.open({ connectionString: url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaTooNewError);
    expect((err as Error).message).toContain(`schema version ${SCHEMA_VERSION + 1}, newer than this gamehost knows (${SCHEMA_VERSION})`);
    expect(await queryDatabase(url, 'SELECT version FROM schema_version')).toEqual([{ version: SCHEMA_VERSION + 1 }]);
  });

  /** A database of the current schema holding one lobby (with a pending player), for a test to take back a version. */
  async function databaseWithLobby(): Promise<{ url: string; kept: LobbyRow }> {
    const url = await createTestDatabase();
    const old = await PostgresStore.open({ connectionString: url });
    const kept = lobby();
    await old.insertLobby(kept, pending());
    await old.close();
    return { url, kept };
  }

  it('migrates a version 1 database (before games per CI job) in place, keeping its lobbies', async () => {
    const { url, kept } = await databaseWithLobby();
    // Back to what version 1 had: no games table, nor the indexes version 2 added, nor versions 3 and 4.
    await queryDatabase(
      url,
      'DROP TABLE games, lobby_logs, lobby_log_streams; DROP INDEX lobbies_history; DROP INDEX exports_game; DROP TABLE running_players; DROP INDEX lobbies_running_mode; ' +
        'DROP TRIGGER running_players_player ON players; DROP TRIGGER running_players_lobby ON lobbies; ' +
        `DROP FUNCTION running_players_on_player; DROP FUNCTION running_players_on_lobby; ${SINCE_22} UPDATE schema_version SET version = 1`,
    );
    const store = await PostgresStore.open({ connectionString: url });
    try {
      expect(await queryDatabase(url, 'SELECT version FROM schema_version')).toEqual([{ version: SCHEMA_VERSION }]);
      // Its running lobby's player, counted from the lobbies it held.
      expect(await store.playerCounts(kept.namespace_id)).toEqual([{ game_mode: kept.game_mode, region_id: kept.region_id, player_count: 1 }]);
      await store.appendLobbyLogs(kept.lobby_id, 'std_out', [Buffer.from('after the migration')], T0);
      expect(await store.lobbyLogs(kept.lobby_id, 'std_out', 1)).toHaveLength(1);
      expect((await store.getLobby(kept.lobby_id))?.lobby_id).toBe(kept.lobby_id);
      const game = { game_id: randomUUID(), namespace_id: randomUUID(), name: '', game_modes: '[]', regions: '[]', create_ts: T0, expire_ts: T0 + 1, delete_ts: null };
      await store.insertGame(game);
      expect(await store.getGame(game.game_id)).toEqual(game);
    } finally {
      await store.close();
    }
  });

  it("migrates a version 19 database, whose stopped lobbies kept their players, to one where they left at the lobby's stop", async () => {
    const url = await createTestDatabase();
    const old = await PostgresStore.open({ connectionString: url });
    const made = await lobbiesOfVersion19(old);
    await old.close();
    // Back to version 19: its function on a lobby's stop as version 7 wrote it (counts only), and the stopped lobby's
    // players not removed.
    await queryDatabase(
      url,
      `${stepStatement(6, 'postgres', /CREATE OR REPLACE FUNCTION running_players_on_lobby\(\)[\s\S]*?END \$\$;/)}
       UPDATE players SET remove_ts = NULL WHERE lobby_id = '${made.stopped.lobby_id}'; ${SINCE_22} UPDATE schema_version SET version = 19`,
    );
    const store = await PostgresStore.open({ connectionString: url });
    try {
      expect(await queryDatabase(url, 'SELECT version FROM schema_version')).toEqual([{ version: SCHEMA_VERSION }]);
      await expectPlayersLeftWithTheirLobby(store, made);
    } finally {
      await store.close();
    }
  });

  it('migrates a version 5 database (before lobby owners) to the current version, keeping its lobbies, with no owner', async () => {
    const { url, kept } = await databaseWithLobby();
    await queryDatabase(
      url,
      'DROP INDEX lobbies_owner; ALTER TABLE lobbies DROP COLUMN owner, DROP COLUMN owner_pid, DROP COLUMN owner_start, DROP COLUMN server_pid, ' +
        `DROP COLUMN server_start; ${SINCE_22} UPDATE schema_version SET version = 5`,
    );
    const store = await PostgresStore.open({ connectionString: url });
    try {
      expect(await queryDatabase(url, 'SELECT version FROM schema_version')).toEqual([{ version: SCHEMA_VERSION }]);
      expect(await store.getLobby(kept.lobby_id)).toEqual(kept);
      await store.setLobbyServer(kept.lobby_id, 7, T0);
      expect(await store.ownedLobbies('r-1')).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('keeps a stream within its bound on disk: a flood takes at most LOG_DISK_BYTES a stream, its dropped rows reclaimed as it goes', async () => {
    const url = await createTestDatabase();
    const store = await PostgresStore.open({ connectionString: url });
    // As the bench measures it: after a VACUUM, the table with its TOAST and indexes.
    const size = async () => {
      await queryDatabase(url, 'VACUUM lobby_logs');
      return Number((await queryDatabase(url, "SELECT pg_total_relation_size('lobby_logs') AS n"))[0].n);
    };
    try {
      const before = await size();
      // 2 lobbies printing 8 MiB each of random text (which PostgreSQL does not compress) in 16 KiB lines, 16 a write
      // (the runner's batches), one after the other: the first alone is the case where the space a vacuum has not
      // reclaimed yet counts most (4.1 MiB here, where a replica that vacuumed each 16 MiB dropped took 8.4).
      for (let lobby = 1; lobby <= 2; lobby++) {
        const id = randomUUID();
        for (let batch = 0; batch < 32; batch++) {
          const lines = Array.from({ length: 16 }, () => Buffer.from(randomBytes(12 * 1024).toString('base64')));
          await store.appendLobbyLogs(id, 'std_out', lines, T0 + batch);
        }
        const kept = await store.lobbyLogs(id, 'std_out', LOG_BOUNDS.lines);
        expect(kept.reduce((sum, l) => sum + l.line.length, 0)).toBeGreaterThan(LOG_BOUNDS.bytes - 64 * 1024 - 16 * (LOG_BOUNDS.rowBytes ?? 0));
        expect((await size()) - before).toBeLessThanOrEqual(lobby * LOG_DISK_BYTES);
      }
    } finally {
      await store.close();
    }
  });

  it('bigint columns read back exactly up to 2^53 - 1; beyond, the read fails instead of rounding', async () => {
    const url = await createTestDatabase();
    const store = await PostgresStore.open({ connectionString: url });
    try {
      const l = lobby({ create_ts: Number.MAX_SAFE_INTEGER });
      await store.insertLobby(l, pending());
      expect((await store.getLobby(l.lobby_id))!.create_ts).toBe(Number.MAX_SAFE_INTEGER);
      await queryDatabase(url, 'UPDATE lobbies SET create_ts = $1 WHERE lobby_id = $2', ['9007199254740993', l.lobby_id]);
      await expect(store.getLobby(l.lobby_id)).rejects.toThrow(/9007199254740993, beyond 2\^53 - 1/);
      // The pool is unharmed: the next query answers.
      await expect(store.ping()).resolves.toBeUndefined();
    } finally {
      await store.close();
    }
  });

  it('connections cut by the server mid-transaction fail those calls, not the process; the store answers again', async () => {
    const url = await createTestDatabase();
    const store = await PostgresStore.open({ connectionString: url });
    try {
      const l = lobby({ max_players: 256 });
      await store.insertLobby(l, pending());
      const name = new URL(url).pathname.slice(1);
      const joins = Array.from({ length: 40 }, (_, i) => store.joinLobby(l.lobby_id, pending(), T0 + i, null).then(() => 'ok', () => 'failed'));
      await new Promise((resolve) => setTimeout(resolve, 5));
      await queryDatabase(url, 'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()', [name]);
      const outcomes = await Promise.all(joins);
      expect(outcomes.every((o) => o === 'ok' || o === 'failed')).toBe(true);
      await expect(store.ping()).resolves.toBeUndefined();
      const count = (await queryDatabase(url, 'SELECT count(*)::int AS n FROM players WHERE lobby_id = $1', [l.lobby_id]))[0].n;
      // Every join that answered ok holds its seat; none that failed left one behind.
      expect(count).toBe(1 + outcomes.filter((o) => o === 'ok').length);
    } finally {
      await store.close();
    }
  });

  it('a database that does not answer fails open within the connection timeout', async () => {
    const started = Date.now();
    await expect(PostgresStore.open({ connectionString: 'postgres://nobody@127.0.0.1:1/none' })).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(6_000);
  });
});

// Versions 5 and 6 counted every player holding a place, pending ones too; version 7 counts connected players.
// A store written by version 5 (its rows put in while version 5's own triggers kept the counts) is migrated: the
// counts are made again from its players, and only the new triggers keep them from then on.
describe('a version 6 store, whose statistics counted pending players, migrated to count connected ones', () => {
  // What version 5 of the SQLite store created (sqlite.ts at that version); PostgreSQL's is MIGRATIONS[4].
  const SQLITE_VERSION_5_TRIGGERS = `
CREATE TRIGGER running_players_join AFTER INSERT ON players
  WHEN NEW.remove_ts IS NULL AND (SELECT stop_ts IS NULL FROM lobbies WHERE lobby_id = NEW.lobby_id)
BEGIN
  INSERT INTO running_players (namespace_id, game_mode, region_id, player_count)
    SELECT namespace_id, game_mode, region_id, 1 FROM lobbies WHERE lobby_id = NEW.lobby_id
    ON CONFLICT (namespace_id, game_mode, region_id) DO UPDATE SET player_count = player_count + 1;
END;
CREATE TRIGGER running_players_leave AFTER DELETE ON players
  WHEN OLD.remove_ts IS NULL AND (SELECT stop_ts IS NULL FROM lobbies WHERE lobby_id = OLD.lobby_id)
BEGIN
  UPDATE running_players SET player_count = player_count - 1
   WHERE (namespace_id, game_mode, region_id) = (SELECT namespace_id, game_mode, region_id FROM lobbies WHERE lobby_id = OLD.lobby_id);
END;
CREATE TRIGGER running_players_remove AFTER UPDATE OF remove_ts ON players
  WHEN OLD.remove_ts IS NULL AND NEW.remove_ts IS NOT NULL AND (SELECT stop_ts IS NULL FROM lobbies WHERE lobby_id = NEW.lobby_id)
BEGIN
  UPDATE running_players SET player_count = player_count - 1
   WHERE (namespace_id, game_mode, region_id) = (SELECT namespace_id, game_mode, region_id FROM lobbies WHERE lobby_id = NEW.lobby_id);
END;
CREATE TRIGGER running_players_stop AFTER UPDATE OF stop_ts ON lobbies
  WHEN OLD.stop_ts IS NULL AND NEW.stop_ts IS NOT NULL
BEGIN
  UPDATE running_players SET player_count = player_count - (SELECT COUNT(*) FROM players WHERE lobby_id = NEW.lobby_id AND remove_ts IS NULL)
   WHERE namespace_id = NEW.namespace_id AND game_mode = NEW.game_mode AND region_id = NEW.region_id;
END;
CREATE TRIGGER running_players_delete AFTER DELETE ON lobbies
  WHEN OLD.stop_ts IS NULL
BEGIN
  UPDATE running_players SET player_count = player_count - (SELECT COUNT(*) FROM players WHERE lobby_id = OLD.lobby_id AND remove_ts IS NULL)
   WHERE namespace_id = OLD.namespace_id AND game_mode = OLD.game_mode AND region_id = OLD.region_id;
END;
`;

  /** A SQL runner on the old database: `?` placeholders, numbered ($1, …) for PostgreSQL. */
  type Exec = (sql: string, values?: unknown[]) => Promise<unknown[]>;

  const ns = 'ns-v5';
  // player_count as version 5 kept it: the players holding a place.
  const running = lobby({ namespace_id: ns, max_players: 8, ready_ts: T0, player_count: 2 });
  const stopped = lobby({ namespace_id: ns });
  const onlyPending = lobby({ namespace_id: ns, game_mode: 'duos', region_id: 'lnd-fra', ready_ts: T0 });
  const ids = { waiting: randomUUID(), inGame: randomUUID(), left: randomUUID(), inStopped: randomUUID(), alone: randomUUID() };

  /** Writes what a version 5 emulator held: pending, connected and removed players, and a stopped lobby. */
  async function writeVersion5Rows(exec: Exec): Promise<void> {
    // The columns a version 5 store had: none of the later steps' (version_id is version 13's, idle_max and idle_ts
    // 14's, the direct and party counts 17's).
    const later = new Set(['version_id', 'idle_max', 'idle_ts', 'max_players_direct', 'max_players_party']);
    const columns = (LOBBY_INSERT_COLUMNS.split(', ') as (keyof LobbyRow)[]).filter((c) => !later.has(c));
    for (const l of [running, stopped, onlyPending])
      await exec(`INSERT INTO lobbies (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`, columns.map((c) => l[c]));
    const player = (id: string, lobbyId: string, connectTs: number | null) =>
      exec('INSERT INTO players (player_id, lobby_id, create_ts, source_ip, register_by_ts, connect_ts) VALUES (?, ?, ?, ?, ?, ?)', [
        id, lobbyId, T0, '127.0.0.1', connectTs === null ? T0 + HOUR : null, connectTs,
      ]);
    await player(ids.waiting, running.lobby_id, null);
    await player(ids.inGame, running.lobby_id, T0 + 1);
    await player(ids.left, running.lobby_id, T0 + 1);
    await player(ids.inStopped, stopped.lobby_id, T0 + 1);
    await player(ids.alone, onlyPending.lobby_id, null);
    await exec('UPDATE players SET remove_ts = ? WHERE player_id = ?', [T0 + 2, ids.left]);
    await exec('UPDATE lobbies SET stop_ts = ?, exit_code = 0, failed = 0 WHERE lobby_id = ?', [T0 + 3, stopped.lobby_id]);
    // Version 5's counts: the pending players in.
    const counts = await exec('SELECT game_mode, region_id, player_count FROM running_players WHERE namespace_id = ? AND player_count > 0 ORDER BY game_mode', [ns]);
    expect(counts.map((r) => ({ ...(r as object), player_count: Number((r as { player_count: unknown }).player_count) }))).toEqual([
      { game_mode: 'default', region_id: 'lnd-atl', player_count: 2 },
      { game_mode: 'duos', region_id: 'lnd-fra', player_count: 1 },
    ]);
  }

  /** The migrated store counts connected players only, now and as players connect and join. */
  async function expectConnectedCounted(store: Store): Promise<void> {
    const atl = (n: number) => ({ game_mode: 'default', region_id: 'lnd-atl', player_count: n });
    expect(await store.playerCounts(ns)).toEqual([atl(1)]);
    expect(await store.connectPlayer(ids.waiting, running.lobby_id, T0 + 10)).toBe('connected');
    expect(await store.playerCounts(ns)).toEqual([atl(2)]);
    // Version 5's triggers are gone: a pending player joining is not counted.
    expect(await store.joinLobby(running.lobby_id, pending(), T0 + 11, null)).toMatchObject({ kind: 'joined', players: 3 });
    expect(await store.playerCounts(ns)).toEqual([atl(2)]);
    expect(await store.connectPlayer(ids.alone, onlyPending.lobby_id, T0 + 12)).toBe('connected');
    expect(await store.playerCounts(ns)).toEqual(expect.arrayContaining([atl(2), { game_mode: 'duos', region_id: 'lnd-fra', player_count: 1 }]));
    await store.disconnectPlayer(ids.inGame, running.lobby_id, T0 + 13);
    expect(await store.playerCounts(ns)).toEqual(expect.arrayContaining([atl(1), { game_mode: 'duos', region_id: 'lnd-fra', player_count: 1 }]));
  }

  it('on SQLite', async () => {
    const file = join(prepareDataDir(tempDir()).root, 'emulator.db');
    await SqliteStore.open(file).close();
    // Back to version 6: version 5's triggers (which it kept) instead of version 7's.
    const db = openDatabase(file, { timeout: 5000 });
    const triggers = () => db.prepare<[], string>("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").pluck().all();
    try {
      for (const name of triggers()) db.exec(`DROP TRIGGER ${name}`);
      db.exec(SQLITE_VERSION_5_TRIGGERS);
      db.exec(`ALTER TABLE lobbies DROP COLUMN version_id; ALTER TABLE lobbies DROP COLUMN idle_max; ALTER TABLE lobbies DROP COLUMN idle_ts; ALTER TABLE lobbies DROP COLUMN max_players_direct; ALTER TABLE lobbies DROP COLUMN max_players_party;
               DROP INDEX players_source; CREATE INDEX players_pending_source ON players (source_ip) WHERE connect_ts IS NULL AND remove_ts IS NULL;
               ${SINCE_22} UPDATE meta SET value = '6' WHERE key = 'schema_version'`);
      await writeVersion5Rows(async (sql, values = []) => {
        const statement = db.prepare<unknown[], unknown>(sql);
        return /^\s*SELECT/i.test(sql) ? statement.all(...values) : (statement.run(...values), []);
      });
    } finally {
      db.close();
    }
    const store = SqliteStore.open(file);
    try {
      const check = openDatabase(file, { timeout: 5000 });
      try {
        expect(check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe(String(SCHEMA_VERSION));
        expect(check.prepare("SELECT name FROM sqlite_master WHERE type = 'trigger' ORDER BY name").pluck().all()).toEqual([
          'connected_players_delete',
          'connected_players_insert',
          'connected_players_lobby_delete',
          'connected_players_stop',
          'connected_players_update',
          'running_lobbies_delete',
          'running_lobbies_insert',
          'running_lobbies_stop',
        ]);
      } finally {
        check.close();
      }
      await expectConnectedCounted(store);
    } finally {
      await store.close();
    }
  });

  it.skipIf(!PG_PRESENT)('on PostgreSQL', async () => {
    const url = await createTestDatabase();
    // A database as version 6 migrated it: the first six migrations, as migrate() runs them.
    await queryDatabase(url, `CREATE TABLE schema_version (version integer NOT NULL); ${MIGRATIONS.slice(0, 6).map((m) => m.postgres).join('\n')}; INSERT INTO schema_version (version) VALUES (6)`);
    await writeVersion5Rows((sql, values) => {
      let n = 0;
      return queryDatabase(url, sql.replace(/\?/g, () => `$${++n}`), values);
    });
    const store = await PostgresStore.open({ connectionString: url });
    try {
      expect(await queryDatabase(url, 'SELECT version FROM schema_version')).toEqual([{ version: SCHEMA_VERSION }]);
      await expectConnectedCounted(store);
    } finally {
      await store.close();
    }
  });
});

// The SQLite driver this Node.js gets: node:sqlite from 22.13 (nothing to build), better-sqlite3 on 20. The contract
// above ran on it; these are what the driver itself must give the store on either: the file shared by connections
// (as by processes) in WAL mode, another connection's commit seen through data_version, and SQLite's error codes.
describe('SQLite on this Node.js', () => {
  it('migrates a version 5 store (before lobby owners) to the current version, keeping its lobbies, with no owner', async () => {
    const file = join(prepareDataDir(tempDir()).root, 'emulator.db');
    const old = SqliteStore.open(file);
    const kept = lobby();
    await old.insertLobby(kept, pending());
    await old.close();
    const db = openDatabase(file, { timeout: 5000 });
    db.exec(`DROP INDEX lobbies_owner; ALTER TABLE lobbies DROP COLUMN owner; ALTER TABLE lobbies DROP COLUMN owner_pid;
             ALTER TABLE lobbies DROP COLUMN owner_start; ALTER TABLE lobbies DROP COLUMN server_pid; ALTER TABLE lobbies DROP COLUMN server_start;
             ALTER TABLE lobbies DROP COLUMN version_id; ALTER TABLE lobbies DROP COLUMN idle_max; ALTER TABLE lobbies DROP COLUMN idle_ts; ALTER TABLE lobbies DROP COLUMN max_players_direct; ALTER TABLE lobbies DROP COLUMN max_players_party;
             DROP INDEX players_source; CREATE INDEX players_pending_source ON players (source_ip) WHERE connect_ts IS NULL AND remove_ts IS NULL;
             ${SINCE_22} UPDATE meta SET value = '5' WHERE key = 'schema_version'`);
    db.close();
    const store = SqliteStore.open(file);
    try {
      expect(await store.getLobby(kept.lobby_id)).toEqual(kept);
      const owned = lobby({ owner: 'r-1', owner_pid: 1, owner_start: T0 });
      await store.insertLobby(owned, pending());
      expect(await store.ownedLobbies('r-1')).toEqual([owned]);
    } finally {
      await store.close();
    }
    const check = openDatabase(file, { timeout: 5000 });
    expect(check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe(String(SCHEMA_VERSION));
    check.close();
  });

  it('migrates a version 8 store (lines in a WITHOUT ROWID table) to the current version, keeping its lines', async () => {
    const file = join(prepareDataDir(tempDir()).root, 'emulator.db');
    const id = randomUUID();
    const lines = [Buffer.from('one'), Buffer.alloc(3000, 'x'), Buffer.from([0, 0xff])];
    const old = SqliteStore.open(file);
    // An append a line: each a row of one line, as rows were before version 15.
    for (const line of lines) await old.appendLobbyLogs(id, 'std_out', [line], T0);
    await old.close();
    const db = openDatabase(file, { timeout: 5000 });
    db.exec(`CREATE TABLE old_logs (lobby_id TEXT NOT NULL, stream TEXT NOT NULL, ts INTEGER NOT NULL, line BLOB NOT NULL,
               PRIMARY KEY (lobby_id, stream, ts)) WITHOUT ROWID;
             INSERT INTO old_logs SELECT lobby_id, stream, ts, line FROM lobby_logs; DROP TABLE lobby_logs;
             ALTER TABLE old_logs RENAME TO lobby_logs; ALTER TABLE lobbies DROP COLUMN version_id; ALTER TABLE lobbies DROP COLUMN idle_max;
             ALTER TABLE lobbies DROP COLUMN idle_ts; ALTER TABLE lobbies DROP COLUMN max_players_direct; ALTER TABLE lobbies DROP COLUMN max_players_party; DROP INDEX players_source;
             CREATE INDEX players_pending_source ON players (source_ip) WHERE connect_ts IS NULL AND remove_ts IS NULL;
             ${SINCE_22} UPDATE meta SET value = '8' WHERE key = 'schema_version'`);
    db.close();
    const store = SqliteStore.open(file);
    try {
      expect((await store.lobbyLogs(id, 'std_out', 10)).map((l) => l.line)).toEqual(lines);
      await store.appendLobbyLogs(id, 'std_out', [Buffer.from('after')], T0);
      expect((await store.lobbyLogs(id, 'std_out', 1))[0]).toEqual({ ts: T0 * 1000 + 3, line: Buffer.from('after') });
    } finally {
      await store.close();
    }
  });

  it("migrates a version 19 store, whose stopped lobbies kept their players, to one where they left at the lobby's stop", async () => {
    const file = join(prepareDataDir(tempDir()).root, 'emulator.db');
    const old = SqliteStore.open(file);
    const made = await lobbiesOfVersion19(old);
    await old.close();
    // Back to version 19: its trigger on a lobby's stop as version 10 made it (counts only), and the stopped lobby's
    // players not removed.
    const db = openDatabase(file, { timeout: 5000 });
    db.exec(`DROP TRIGGER connected_players_stop;
             ${stepStatement(9, 'sqlite', /CREATE TRIGGER IF NOT EXISTS connected_players_stop[\s\S]*?END;/)}
             UPDATE players SET remove_ts = NULL WHERE lobby_id = '${made.stopped.lobby_id}';
             ${SINCE_22} UPDATE meta SET value = '19' WHERE key = 'schema_version'`);
    db.close();
    const store = SqliteStore.open(file);
    try {
      await expectPlayersLeftWithTheirLobby(store, made);
    } finally {
      await store.close();
    }
  });

  it('keeps a stream within its bound on disk: a flood of 1 KB lines takes at most LOG_DISK_BYTES a stream', async () => {
    const file = join(prepareDataDir(tempDir()).root, 'emulator.db');
    const store = SqliteStore.open(file);
    const size = () => {
      const db = openDatabase(file, { timeout: 5000 });
      try {
        return (db.pragma('page_count', { simple: true }) as number) * (db.pragma('page_size', { simple: true }) as number);
      } finally {
        db.close();
      }
    };
    try {
      const before = size();
      // 4 lobbies printing 6 MiB each in 1 KB lines, 256 a write (the runner's batches): each keeps its newest 4 MiB,
      // in rows of 64 lines that fill their pages (version 9's rows of one line took 7.1 MiB a stream, version 8's 23).
      const line = Buffer.alloc(1024, 'x');
      for (let lobby = 0; lobby < 4; lobby++) {
        const id = randomUUID();
        for (let batch = 0; batch < 24; batch++) await store.appendLobbyLogs(id, 'std_out', Array(256).fill(line), T0 + batch);
        const kept = await store.lobbyLogs(id, 'std_out', LOG_BOUNDS.lines);
        expect(kept.length * 1024).toBeGreaterThan(LOG_BOUNDS.bytes - 64 * 1024);
        expect(kept.length * 1024).toBeLessThanOrEqual(LOG_BOUNDS.bytes);
      }
      const grown = size() - before;
      expect(grown / 4).toBeLessThanOrEqual(LOG_DISK_BYTES);
    } finally {
      await store.close();
    }
  });

  it(`opens with ${hasNodeSqlite() ? 'node:sqlite' : 'better-sqlite3'}`, () => {
    expect(sqliteDriverName()).toBe(hasNodeSqlite() ? 'node:sqlite' : 'better-sqlite3');
    expect(hasNodeSqlite('20.20.2')).toBe(false);
    expect(hasNodeSqlite('22.12.0')).toBe(false);
    expect(hasNodeSqlite('22.13.0')).toBe(true);
    expect(hasNodeSqlite('24.0.0')).toBe(true);
  });

  it('two stores on one file: WAL, and a game another connection creates is seen at once (data_version)', async () => {
    const file = join(prepareDataDir(tempDir()).root, 'emulator.db');
    const a = SqliteStore.open(file);
    const b = SqliteStore.open(file);
    try {
      // b reads the game as absent, then a creates it: b's kept answer must not hide it.
      expect(await b.getGame('g-1')).toBeUndefined();
      await a.insertGame({ game_id: 'g-1', namespace_id: 'ns-g1', name: 'one', game_modes: '["default"]', regions: '["lnd-atl"]', create_ts: T0, expire_ts: T0 + 3_600_000, delete_ts: null });
      expect(await b.getGame('g-1')).toMatchObject({ game_id: 'g-1', name: 'one' });
      const db = openDatabase(file, { timeout: 1000 });
      expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
      expect(db.pragma('busy_timeout', { simple: true })).toBe(1000);
      db.close();
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("a writer waits out another's lock up to the busy timeout, then fails with SQLITE_BUSY; a unique key is SQLITE_CONSTRAINT_*", () => {
    const file = join(prepareDataDir(tempDir()).root, 'emulator.db');
    void SqliteStore.open(file).close();
    const one = openDatabase(file, { timeout: 50 });
    const two = openDatabase(file, { timeout: 50 });
    try {
      one.exec('BEGIN IMMEDIATE');
      expect(() => two.exec("INSERT INTO meta (key, value) VALUES ('x', '1')")).toThrow(expect.objectContaining({ code: expect.stringMatching(/^SQLITE_BUSY/) }));
      one.exec('COMMIT');
      const insert = two.prepare<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?)');
      insert.run('x', '1');
      expect(() => insert.run('x', '2')).toThrow(expect.objectContaining({ code: expect.stringMatching(/^SQLITE_CONSTRAINT_(PRIMARYKEY|UNIQUE)$/) }));
    } finally {
      one.close();
      two.close();
    }
  });
});
