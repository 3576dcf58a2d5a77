// The store's one migration list (src/emulator/stores/migrations.ts) on both engines: the same version numbers;
// a store made by the tree before the list was one (SQLite and PostgreSQL each at their version 9, kept as the SQL
// that tree made in test/fixtures/stores/) opens, migrates and keeps what it held; a store a newer gamehost migrated
// is refused with nothing written. The upgrades of older versions are in store-contract.test.ts and lifecycle.test.ts.
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { prepareDataDir } from '../../src/emulator/datadir.js';
import { MIGRATIONS, SCHEMA_VERSION, SchemaTooNewError } from '../../src/emulator/stores/migrations.js';
import { PostgresStore } from '../../src/emulator/stores/postgres.js';
import { SqliteStore } from '../../src/emulator/stores/sqlite.js';
import { openDatabase } from '../../src/emulator/stores/sqlite-driver.js';
import type { Store } from '../../src/emulator/stores/store.js';
import { createTestDatabase, PG_PRESENT, queryDatabase } from '../helpers/postgres.js';
import { tempDir } from '../helpers/cli.js';

const T0 = 1_763_000_000_000;
const HOUR = 3_600_000;
const fixture = (name: string) => readFileSync(new URL(`../fixtures/stores/${name}`, import.meta.url), 'utf8');

/** A SQL runner on a store's database: `?` placeholders (numbered for PostgreSQL), rows back. */
type Exec = (sql: string, values?: unknown[]) => Promise<Record<string, unknown>[]>;

function sqliteExec(file: string): Exec {
  return async (sql, values = []) => {
    const db = openDatabase(file, { timeout: 5000 });
    try {
      const statement = db.prepare<unknown[], Record<string, unknown>>(sql);
      return /^\s*SELECT/i.test(sql) ? statement.all(...values) : (statement.run(...values), []);
    } finally {
      db.close();
    }
  };
}

function postgresExec(url: string): Exec {
  return (sql, values) => {
    let n = 0;
    return queryDatabase(url, sql.replace(/\?/g, () => `$${++n}`), values);
  };
}

/** What a version 9 emulator held, written as it wrote it: a running lobby with a connected and a pending player, a line of its output, a game. */
function version9Rows() {
  const ids = { lobby: randomUUID(), connected: randomUUID(), pending: randomUUID(), game: randomUUID(), namespace: randomUUID() };
  const line = Buffer.from([0x68, 0x69, 0x00, 0xff]);
  const game = { game_id: ids.game, namespace_id: randomUUID(), name: 'kept', game_modes: '["default"]', regions: '["lnd-atl"]', create_ts: T0, expire_ts: T0 + HOUR, delete_ts: null };
  async function write(exec: Exec): Promise<void> {
    await exec(
      `INSERT INTO lobbies (lobby_id, namespace_id, game_mode, region_id, region_name, max_players, publicity, tags, lobby_config,
         create_ts, start_ts, ready_ts, ports, player_count) VALUES (?, ?, 'default', 'lnd-atl', 'Atlanta', 8, 'public', '{}', NULL, ?, ?, ?, '{}', 2)`,
      [ids.lobby, ids.namespace, T0, T0, T0],
    );
    const player = 'INSERT INTO players (player_id, lobby_id, create_ts, source_ip, register_by_ts, connect_ts) VALUES (?, ?, ?, ?, ?, ?)';
    await exec(player, [ids.connected, ids.lobby, T0, '127.0.0.1', null, T0 + 1]);
    await exec(player, [ids.pending, ids.lobby, T0, '127.0.0.1', T0 + HOUR, null]);
    await exec("INSERT INTO lobby_logs (lobby_id, stream, ts, line) VALUES (?, 'std_out', ?, ?)", [ids.lobby, T0 * 1000, line]);
    await exec("INSERT INTO lobby_log_streams (lobby_id, stream, last_ts, line_count, byte_count) VALUES (?, 'std_out', ?, 1, ?)", [ids.lobby, T0 * 1000, line.length]);
    await exec(`INSERT INTO games (${Object.keys(game).join(', ')}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, Object.values(game));
  }
  /** The migrated store answers with all of it, and keeps counting and appending as a new one does. */
  async function expectKept(store: Store): Promise<void> {
    expect(await store.getLobby(ids.lobby)).toMatchObject({ namespace_id: ids.namespace, player_count: 2, stop_ts: null, owner: null });
    expect(await store.getGame(ids.game)).toEqual(game);
    const counts = (n: number) => [{ game_mode: 'default', region_id: 'lnd-atl', player_count: n }];
    expect(await store.playerCounts(ids.namespace)).toEqual(counts(1));
    expect(await store.connectPlayer(ids.pending, ids.lobby, T0 + 10)).toBe('connected');
    expect(await store.playerCounts(ids.namespace)).toEqual(counts(2));
    expect(await store.lobbyLogs(ids.lobby, 'std_out', 10)).toEqual([{ ts: T0 * 1000, line }]);
    await store.appendLobbyLogs(ids.lobby, 'std_out', [Buffer.from('after')], T0);
    expect((await store.lobbyLogs(ids.lobby, 'std_out', 10)).map((l) => l.line.toString('latin1'))).toEqual([line.toString('latin1'), 'after']);
  }
  return { write, expectKept };
}

/** A SQLite store's schema: every table, index and trigger, its SQL with the layout set aside (ALTER TABLE writes columns it adds on one line). */
async function sqliteSchema(file: string): Promise<unknown[]> {
  const rows = await sqliteExec(file)('SELECT type, name, tbl_name, sql FROM sqlite_master ORDER BY type, name');
  return rows.map((r) => ({ ...r, sql: typeof r.sql === 'string' ? r.sql.replace(/\s+/g, ' ').replace(/\s*([,()])\s*/g, '$1') : r.sql }));
}

async function postgresSchema(url: string): Promise<unknown[]> {
  return Promise.all([
    queryDatabase(url, `SELECT table_name, column_name, data_type, is_nullable, column_default FROM information_schema.columns
                         WHERE table_schema = 'public' ORDER BY table_name, ordinal_position`),
    queryDatabase(url, "SELECT indexname, indexdef FROM pg_indexes WHERE schemaname = 'public' ORDER BY indexname"),
    queryDatabase(url, 'SELECT tgname, pg_get_triggerdef(oid) AS def FROM pg_trigger WHERE NOT tgisinternal ORDER BY tgname'),
    queryDatabase(url, "SELECT proname, prosrc FROM pg_proc WHERE pronamespace = 'public'::regnamespace ORDER BY proname"),
  ]);
}

function sqliteFile(): string {
  return join(prepareDataDir(tempDir()).root, 'emulator.db');
}

/** Every file in the directory and its bytes. */
function directoryBytes(dir: string): Record<string, string> {
  return Object.fromEntries(readdirSync(dir, { recursive: true, encoding: 'utf8' }).sort().map((name) => {
    let bytes = '(directory)';
    try {
      bytes = readFileSync(join(dir, name)).toString('base64');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EISDIR') throw err;
    }
    return [name, bytes];
  }));
}

describe('one list, the same numbers on both engines', () => {
  it('version 10 is where the engines met: a step for each engine at every version, SQLite and PostgreSQL each made at it', async () => {
    // Entry 9 takes a store to version 10: PostgreSQL's version 9 already was that schema, SQLite's was not.
    expect(SCHEMA_VERSION).toBeGreaterThanOrEqual(10);
    expect(MIGRATIONS[9]!.postgres).toBe('');
    expect(MIGRATIONS[9]!.sqlite).toContain('CREATE TRIGGER IF NOT EXISTS connected_players_insert');
    for (const step of MIGRATIONS) {
      expect(step.sqlite).toEqual(expect.any(String));
      expect(step.postgres).toEqual(expect.any(String));
    }
    const file = sqliteFile();
    await SqliteStore.open(file).close();
    expect(await sqliteExec(file)("SELECT value FROM meta WHERE key = 'schema_version'")).toEqual([{ value: String(SCHEMA_VERSION) }]);
    if (!PG_PRESENT) return;
    const url = await createTestDatabase();
    await (await PostgresStore.open({ connectionString: url })).close();
    expect(await queryDatabase(url, 'SELECT version FROM schema_version')).toEqual([{ version: SCHEMA_VERSION }]);
  });
});

describe('a store made by the tree before one list (version 9 on each engine) opens and migrates to the current version', () => {
  it('on SQLite: what it held is kept, its schema is a new store\'s, and nothing is left to make at the next open', async () => {
    const file = sqliteFile();
    const db = openDatabase(file, { timeout: 5000 });
    db.exec(fixture('sqlite-version-9.sql'));
    db.close();
    const rows = version9Rows();
    await rows.write(sqliteExec(file));
    const store = SqliteStore.open(file);
    try {
      await rows.expectKept(store);
    } finally {
      await store.close();
    }
    expect(await sqliteExec(file)("SELECT value FROM meta WHERE key = 'schema_version'")).toEqual([{ value: String(SCHEMA_VERSION) }]);
    const fresh = sqliteFile();
    await SqliteStore.open(fresh).close();
    expect(await sqliteSchema(file)).toEqual(await sqliteSchema(fresh));
  });

  it.skipIf(!PG_PRESENT)('on PostgreSQL: what it held is kept, and its schema is a new store\'s', async () => {
    const url = await createTestDatabase();
    await queryDatabase(url, fixture('postgres-version-9.sql'));
    const rows = version9Rows();
    await rows.write(postgresExec(url));
    const store = await PostgresStore.open({ connectionString: url });
    try {
      await rows.expectKept(store);
    } finally {
      await store.close();
    }
    expect(await queryDatabase(url, 'SELECT version FROM schema_version')).toEqual([{ version: SCHEMA_VERSION }]);
    const fresh = await createTestDatabase();
    await (await PostgresStore.open({ connectionString: fresh })).close();
    expect(await postgresSchema(url)).toEqual(await postgresSchema(fresh));
  });
});

// A newer gamehost's next version that dropped an index an earlier one made: the code before one list re-made such
// things at every open (and wrote them into the newer store) before it looked at the version.
describe('a store migrated by a newer gamehost is refused, with nothing written', () => {
  it('on SQLite: every byte of its data directory is as it was', async () => {
    const file = sqliteFile();
    const made = SqliteStore.open(file);
    await made.insertGame({ game_id: randomUUID(), namespace_id: randomUUID(), name: '', game_modes: '[]', regions: '[]', create_ts: T0, expire_ts: T0 + 1, delete_ts: null });
    await made.close();
    await sqliteExec(file)(`DROP INDEX lobbies_idle`);
    await sqliteExec(file)("UPDATE meta SET value = ? WHERE key = 'schema_version'", [String(SCHEMA_VERSION + 1)]);
    const dir = join(file, '..');
    const before = directoryBytes(dir);
    expect(() => SqliteStore.open(file)).toThrow(SchemaTooNewError);
    expect(() => SqliteStore.open(file)).toThrow(
      `the emulator database ${file} has schema version ${SCHEMA_VERSION + 1}, newer than this gamehost knows (${SCHEMA_VERSION}); upgrade gamehost, or give it another data directory`,
    );
    expect(directoryBytes(dir)).toEqual(before);
  });

  it.skipIf(!PG_PRESENT)('on PostgreSQL: its tables, indexes and rows are as they were', async () => {
    const url = await createTestDatabase();
    const made = await PostgresStore.open({ connectionString: url });
    await made.insertGame({ game_id: randomUUID(), namespace_id: randomUUID(), name: '', game_modes: '[]', regions: '[]', create_ts: T0, expire_ts: T0 + 1, delete_ts: null });
    await made.secret();
    await made.close();
    await queryDatabase(url, 'DROP INDEX lobbies_idle; UPDATE schema_version SET version = version + 1');
    const snapshot = async () => [
      await postgresSchema(url),
      await queryDatabase(url, 'SELECT * FROM schema_version'),
      await queryDatabase(url, 'SELECT * FROM meta ORDER BY key'),
      await queryDatabase(url, 'SELECT * FROM games'),
    ];
    const before = await snapshot();
    const err = await PostgresStore.open({ connectionString: url }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SchemaTooNewError);
    expect((err as Error).message).toBe(
      `the emulator database has schema version ${SCHEMA_VERSION + 1}, newer than this gamehost knows (${SCHEMA_VERSION}); upgrade gamehost, or point --database at another database`,
    );
    expect(await snapshot()).toEqual(before);
  });
});
