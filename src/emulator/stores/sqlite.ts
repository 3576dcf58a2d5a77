// The Store in SQLite, shared by every emulator process over one data directory: the engine under sql.ts's store
// (statements, transactions) and what SQLite writes its own way.
import { IdentifierNode, SqliteAdapter, SqliteIntrospector, SqliteQueryCompiler, TableNode, sql, type AliasNode } from './kysely.js';
import { DEFAULT_CONFIG } from '../config.js';
import { sleepSync } from '../datadir.js';
import { migrateSqlite } from './migrations.js';
import { INSERT_LINE, SqlStore, compiler, mapSlot, type AnyQuery, type Compiled, type Connection, type Query, type SqlEngine } from './sql.js';
import { WAL_FALLBACK_PAGES, openDatabase, startCheckpointer, type Checkpointer, type SqliteDatabase, type SqliteStatement } from './sqlite-driver.js';
import type { LogChunk, LogStream } from './store.js';

const BUSY_RETRY_MS = 15_000;
const ignore = (): void => {};

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

/**
 * A table aliased as one of these indexes is read through it: SQLite's planner preferred the namespace index, which
 * holds every stopped lobby too.
 */
const INDEX_HINTS = new Set(['lobbies_running_mode', 'lobbies_find', 'lobbies_owner', 'players_source']);

class HintingCompiler extends SqliteQueryCompiler {
  protected override visitAlias(node: AliasNode): void {
    super.visitAlias(node);
    if (TableNode.is(node.node) && IdentifierNode.is(node.alias) && INDEX_HINTS.has(node.alias.name)) this.append(` indexed by "${node.alias.name}"`);
  }
}

const compile = compiler(
  { adapter: new SqliteAdapter(), introspector: (db) => new SqliteIntrospector(db), queryCompiler: () => new HintingCompiler() },
  {
    binary: (column) => sql.ref(column),
    forUpdate: (query) => query,
    byteLength: (column) => sql<number>`length(${sql.ref(column)})`,
    oneOf: (column, values) => sql`${sql.ref(column)} in (select value from json_each(${mapSlot(values, JSON.stringify)}))`,
    // json_each compares any tag name, quotes and dots included, which a JSON path could not.
    hasTags: (column, tags) =>
      sql`not exists (select 1 from json_each(${mapSlot(tags, JSON.stringify)}) q
        where not exists (select 1 from json_each(${sql.ref(column)}) t where t.key = q.key and t.value = q.value))`,
  },
);

/**
 * SQLite's driver is synchronous and a transaction is the connection's: while one runs (its body awaits between
 * statements), the process's other statements wait for its end, or they would join it.
 */
class SqliteEngine implements SqlEngine {
  private readonly statements = new Map<AnyQuery, { stmt: SqliteStatement; bind: Compiled['bind'] }>();
  private turn: Promise<unknown> | undefined;
  private readonly direct: Connection = {
    all: async (q, args) => {
      const { stmt, bind } = this.statement(q);
      return stmt.all(...bind(args)) as never;
    },
    run: async (q, args) => {
      const { stmt, bind } = this.statement(q);
      return stmt.run(...bind(args)).changes;
    },
  };

  constructor(
    private readonly db: SqliteDatabase,
    private readonly checkpointer?: Checkpointer,
  ) {}

  private statement(q: AnyQuery) {
    let s = this.statements.get(q);
    if (s === undefined) {
      const c = compile(q);
      s = { stmt: this.db.prepare(c.sql), bind: c.bind };
      this.statements.set(q, s);
    }
    return s;
  }

  // Each waits in a loop of its own, so that nothing runs between its last look and its statement.
  async all<P extends object, R>(q: Query<P, R>, args: P): Promise<R[]> {
    while (this.turn !== undefined) await this.turn.catch(ignore);
    return this.direct.all(q, args);
  }

  async run<P extends object>(q: Query<P, unknown>, args: P): Promise<number> {
    while (this.turn !== undefined) await this.turn.catch(ignore);
    return this.direct.run(q, args);
  }

  async transaction<T>(body: (c: Connection) => Promise<T>): Promise<T> {
    while (this.turn !== undefined) await this.turn.catch(ignore);
    // BEGIN IMMEDIATE takes the write lock up front, which avoids upgrade deadlocks between processes, and
    // serialises finds and joins across them: no two fill the last place of a lobby.
    this.db.exec('BEGIN IMMEDIATE');
    const turn = (async () => {
      try {
        const result = await body(this.direct);
        this.db.exec('COMMIT');
        return result;
      } catch (err) {
        try {
          this.db.exec('ROLLBACK');
        } catch {
          // SQLite ended the transaction itself
        }
        throw err;
      } finally {
        this.turn = undefined;
      }
    })();
    this.turn = turn;
    return turn;
  }

  async lockFinds(): Promise<void> {}

  async insertLines(c: Connection, lobbyId: string, stream: LogStream, chunks: LogChunk[]): Promise<void> {
    for (const k of chunks) await c.run(INSERT_LINE, { id: lobbyId, stream, ts: k.ts, line: k.bytes, line_count: k.count, lengths: k.lengths });
  }

  async droppedLogs(): Promise<void> {}

  async close(): Promise<void> {
    while (this.turn !== undefined) await this.turn.catch(ignore);
    // Its connection first: the last one to close checkpoints the whole WAL and removes it.
    await this.checkpointer?.stop();
    if (this.db.open) this.db.close();
  }
}

export class SqliteStore extends SqlStore {
  /**
   * `timeoutMs`: how long a statement waits for another process's lock before it fails (SQLITE_BUSY).
   * `checkpoints: 'thread'` (a long-running serve): the WAL is checkpointed on a thread of its own (startCheckpointer).
   */
  static open(file: string, timeoutMs: number = DEFAULT_CONFIG.storeTimeoutMs, checkpoints: 'commit' | 'thread' = 'commit'): SqliteStore {
    const db = openDatabase(file, { timeout: timeoutMs });
    try {
      db.pragma(`busy_timeout = ${Math.floor(timeoutMs)}`);
      retryBusy(() => db.pragma('journal_mode = WAL'));
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      // Each step's writer takes the lock; the others wait on it and then find the step taken.
      retryBusy(() => migrateSqlite(db, file));
      if (checkpoints === 'commit') return new SqliteStore(new SqliteEngine(db));
      db.pragma(`wal_autocheckpoint = ${WAL_FALLBACK_PAGES}`);
      return new SqliteStore(new SqliteEngine(db, startCheckpointer(file)));
    } catch (err) {
      db.close();
      throw err;
    }
  }
}
