// The Store in PostgreSQL, shared by every emulator replica on one database: the engine under sql.ts's store
// (a pool, transactions on one connection, row and advisory locks) and what PostgreSQL writes its own way. Like
// SQLite's, it also keeps the local blob store's index and the signing secret, so replicas agree on all of it.
import { randomBytes } from 'node:crypto';
import { PostgresAdapter, PostgresIntrospector, PostgresQueryCompiler, sql } from './kysely.js';
import pg from 'pg';
import { DEFAULT_CONFIG } from '../config.js';
import { migratePostgres } from './migrations.js';
import { SqlStore, compiler, mapSlot, query, type Connection, type Query, type SqlEngine } from './sql.js';
import type { LogChunk, LogStream } from './store.js';

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

const ignore = (): void => {};
/** deadlock_detected */
const DEADLOCK = '40P01';

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
 * printing fast would grow the database by all it printed in that minute, not by the bound. A vacuum here reads
 * only the pages written since the last (the visibility map), so a small threshold costs little.
 */
const VACUUM_AFTER_BYTES = 256 * 1024;

const compile = compiler(
  { adapter: new PostgresAdapter(), introspector: (db) => new PostgresIntrospector(db), queryCompiler: () => new PostgresQueryCompiler() },
  {
    binary: (column) => sql`${sql.ref(column)} collate "C"`,
    forUpdate: (query) => query.forUpdate() as typeof query,
    byteLength: (column) => sql<number>`octet_length(${sql.ref(column)})`,
    oneOf: (column, values) => sql`${sql.ref(column)} = any(${values})`,
    // jsonb @> holds every tag asked, whatever their names.
    hasTags: (column, tags) => sql`${sql.ref(column)}::jsonb @> ${mapSlot(tags, JSON.stringify)}::jsonb`,
  },
);

const LOCK_FINDS = query<{ key: string }>()((db, p) => db.selectNoFrom(sql`pg_advisory_xact_lock(hashtextextended(${p.key}, 0))`.as('locked')));
const INSERT_LINES = query<{ id: string; stream: LogStream; stamps: number[]; lines: Buffer[]; counts: number[]; lengths: (Buffer | null)[] }>()((db, p) =>
  db
    .insertInto('lobby_logs')
    .columns(['lobby_id', 'stream', 'ts', 'line', 'line_count', 'lengths'])
    .expression(
      db.selectNoFrom([
        sql<string>`${p.id}`.as('lobby_id'),
        sql<LogStream>`${p.stream}`.as('stream'),
        sql<number>`unnest(${p.stamps}::bigint[])`.as('ts'),
        sql<Buffer>`unnest(${p.lines}::bytea[])`.as('line'),
        sql<number>`unnest(${p.counts}::integer[])`.as('line_count'),
        sql<Buffer | null>`unnest(${p.lengths}::bytea[])`.as('lengths'),
      ]),
    ),
);

/** Runs compiled statements on a pool or one of its connections; each statement is prepared by name once per connection. */
function connection(on: pg.Pool | pg.PoolClient): Connection {
  return {
    all: async (q, args) => {
      const c = compile(q);
      return (await on.query({ name: c.name, text: c.sql, values: c.bind(args) })).rows;
    },
    run: async (q, args) => {
      const c = compile(q);
      return (await on.query({ name: c.name, text: c.sql, values: c.bind(args) })).rowCount ?? 0;
    },
  };
}

class PostgresEngine implements SqlEngine {
  private readonly pooled: Connection;
  /** Log bytes dropped since the last vacuum of lobby_logs, and that vacuum while it runs. */
  private dropped = 0;
  private vacuuming: Promise<void> | undefined;

  constructor(readonly pool: pg.Pool) {
    this.pooled = connection(pool);
  }

  all<P extends object, R>(q: Query<P, R>, args: P): Promise<R[]> {
    return this.pooled.all(q, args);
  }

  run<P extends object>(q: Query<P, unknown>, args: P): Promise<number> {
    return this.pooled.run(q, args);
  }

  /** Transactions PostgreSQL rolled back as a deadlock's victim (each one waited its deadlock_timeout first). */
  deadlocks = 0;

  async transaction<T>(body: (c: Connection) => Promise<T>): Promise<T> {
    // The store takes rows in one order (a lobby before its players), so none should deadlock; one that does anyway
    // is run again (nothing of it was kept), and counted.
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once(body);
      } catch (err) {
        if ((err as { code?: unknown }).code !== DEADLOCK) throw err;
        this.deadlocks++;
        if (attempt === 3) throw err;
      }
    }
  }

  private async once<T>(body: (c: Connection) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    try {
      await client.query('BEGIN');
      const result = await body(connection(client));
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

  async lockFinds(c: Connection, namespaceId: string): Promise<void> {
    // Joins and other namespaces go on; the chosen lobby's row lock orders a find with the joins to it.
    await c.all(LOCK_FINDS, { key: `find:${namespaceId}` });
  }

  async insertLines(c: Connection, lobbyId: string, stream: LogStream, chunks: LogChunk[]): Promise<void> {
    await c.run(INSERT_LINES, {
      id: lobbyId,
      stream,
      stamps: chunks.map((k) => k.ts),
      lines: chunks.map((k) => k.bytes),
      counts: chunks.map((k) => k.count),
      lengths: chunks.map((k) => k.lengths),
    });
  }

  async droppedLogs(bytes: number): Promise<void> {
    this.dropped += bytes;
    // The append that passes the threshold waits for the vacuum, and so do those that drop more while it runs: what
    // waits to be reclaimed stays near the threshold however fast servers print (a flooding stream's writes slow
    // down; its lines are dropped in memory instead).
    while (this.dropped >= VACUUM_AFTER_BYTES) {
      if (this.vacuuming === undefined) {
        this.dropped = 0;
        // Never failing the append: the space of the rows dropped is reused by the next ones.
        this.vacuuming = this.pool
          .query('VACUUM lobby_logs')
          .then(ignore, ignore)
          .finally(() => (this.vacuuming = undefined));
      }
      await this.vacuuming;
    }
  }

  async close(): Promise<void> {
    await this.vacuuming;
    if (!this.pool.ended) await this.pool.end();
  }
}

export class PostgresStore extends SqlStore {
  private constructor(private readonly pool: pg.Pool) {
    super(new PostgresEngine(pool));
  }

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
}
