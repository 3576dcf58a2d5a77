// The emulator's one way to open SQLite: a small driver interface (the part of better-sqlite3's API the store uses)
// over node:sqlite where Node.js has it (22.13 and later: nothing to build) or better-sqlite3 (Node.js 20). SqliteStore
// and its queries are the same on both; only opening, statements, transactions and error codes differ here.
// better-sqlite3 is a native module and an optional peer dependency, for Node.js 20 only (so where node:sqlite serves,
// nothing is compiled and no install script asks for approval): a Node.js 20 install without it, or one with
// --ignore-scripts (or pnpm, which skips build scripts by default), leaves it absent or unbuilt. That is not a
// crash: one line says what is missing and the two ways out.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type BetterSqlite3 from 'better-sqlite3';
import { packageRoot } from '../../shared/package-root.js';
import { EmulatorFailure } from '../errors.js';

type Params<P> = P extends unknown[] ? P : [P];

export interface SqliteStatement<P extends unknown[] | object = unknown[], R = unknown> {
  run(...params: Params<P>): { changes: number };
  get(...params: Params<P>): R | undefined;
  all(...params: Params<P>): R[];
  /** Rows become their first column's value. */
  pluck(): SqliteStatement<P, R>;
}

export interface SqliteDatabase {
  prepare<P extends unknown[] | object = unknown[], R = unknown>(sql: string): SqliteStatement<P, R>;
  exec(sql: string): void;
  pragma(source: string, options?: { simple?: boolean }): unknown;
  close(): void;
  readonly open: boolean;
}

export interface OpenOptions {
  /** The busy timeout, ms. */
  timeout: number;
}

type BetterSqliteConstructor = typeof BetterSqlite3;

const require = createRequire(import.meta.url);
const defaultLoader = (): BetterSqliteConstructor => require('better-sqlite3') as BetterSqliteConstructor;
let loader: (() => BetterSqliteConstructor) | undefined;

/** Tests replace how better-sqlite3 is loaded (to make it fail), which also makes it the driver on any Node.js;
 * opening and the failure handling stay the same. Without an argument, back to the default choice. */
export function setSqliteLoader(load?: () => BetterSqliteConstructor): void {
  loader = load;
}

/** node:sqlite without a flag: Node.js 22.13 and later. */
export function hasNodeSqlite(version = process.versions.node): boolean {
  const [major, minor] = version.split('.').map(Number) as [number, number];
  return major > 22 || (major === 22 && minor >= 13);
}

/** Which module the embedded emulator opens SQLite with, on this Node.js. */
export function sqliteDriverName(): 'node:sqlite' | 'better-sqlite3' {
  return loader === undefined && hasNodeSqlite() ? 'node:sqlite' : 'better-sqlite3';
}

export function openDatabase(file: string, options: OpenOptions): SqliteDatabase {
  return sqliteDriverName() === 'node:sqlite' ? NodeSqliteDatabase.open(file, options) : openBetterSqlite(file, options);
}

/** What installs better-sqlite3 into gamehost's own directory (verified with npm 11 on a global install of the tarball). */
export const INSTALL_BETTER_SQLITE3 = 'npm install --no-save --save-prod better-sqlite3@12 --foreground-scripts';

/** better-sqlite3 cannot be loaded: not installed, or installed without its native part built. */
export class SqliteUnavailableError extends EmulatorFailure {
  constructor(installed: boolean) {
    // The package's own directory, where a rebuild has to run for a global install.
    const root = packageRoot();
    // Each command tried in that state: rebuild builds a module that is there; install brings one that is absent.
    // It is an optional peer dependency, which npm 11 leaves out even when named (`npm install better-sqlite3` says
    // "up to date"): --save-prod makes it a dependency of this install, --no-save keeps package.json as it is.
    // npm drops it, silently, when its build fails: --foreground-scripts shows the compiler's output, and so why.
    const fix = installed ? 'npm rebuild better-sqlite3 --foreground-scripts' : INSTALL_BETTER_SQLITE3;
    super(
      'SQLITE_UNAVAILABLE',
      installed
        ? 'the local emulator needs better-sqlite3, whose native part is not built for this Node.js (an install with --ignore-scripts?)'
        : 'the local emulator needs better-sqlite3, which is not installed (Node.js 20 only: 22.13 and later have node:sqlite)',
      `run \`${fix}\` in ${root} (it shows the build's errors, if any), or use a real service with --endpoint <url>`,
    );
    this.name = 'SqliteUnavailableError';
  }
}

const NOT_BUILT = /Could not locate the bindings file|NODE_MODULE_VERSION|was compiled against a different Node\.js|invalid ELF header|dlopen|\.node\b/i;

function openBetterSqlite(file: string, options: OpenOptions): SqliteDatabase {
  let Sqlite: BetterSqliteConstructor;
  try {
    Sqlite = (loader ?? defaultLoader)();
  } catch (err) {
    const code = (err as NodeJS.ErrnoException)?.code;
    if ((code === 'MODULE_NOT_FOUND' || code === 'ERR_MODULE_NOT_FOUND') && /better-sqlite3/.test(String((err as Error).message))) {
      throw new SqliteUnavailableError(false);
    }
    if (NOT_BUILT.test(String((err as Error)?.message))) throw new SqliteUnavailableError(true);
    throw err;
  }
  try {
    // The native part is loaded here, on the first open, not when the package is required. Its API is the driver's.
    return new Sqlite(file, { timeout: options.timeout }) as unknown as SqliteDatabase;
  } catch (err) {
    if (NOT_BUILT.test(String((err as Error)?.message)) && !(err as { code?: string }).code?.startsWith('SQLITE_')) {
      throw new SqliteUnavailableError(true);
    }
    throw err;
  }
}

// --- checkpoints off the event loop ------------------------------------------------------------------------------

/**
 * A WAL's checkpoint copies its pages into the database and syncs both files: done by the connection whose commit
 * passes wal_autocheckpoint, it held a busy serve's event loop for about a quarter of its time (lobby creates: 1,420
 * against 1,880 req/s, docs/development.md). This thread checkpoints instead (PASSIVE: it never waits for a lock, and
 * writers go on meanwhile) as soon as frames arrive, through a connection of its own; the serve's connection keeps
 * a higher wal_autocheckpoint (WAL_FALLBACK_PAGES) as the bound should the thread fall behind or not start.
 * A plain-JS eval worker works the same from the compiled CLI and from the test runner.
 */
const CHECKPOINTER = `
const { parentPort, workerData } = require('node:worker_threads');
function open() {
  if (workerData.module !== null) return new (require(workerData.module))(workerData.file);
  // Node.js 22 warns once on loading node:sqlite: the user did not choose it (see loadNodeSqlite).
  const emitWarning = process.emitWarning;
  process.emitWarning = () => {};
  try {
    return new (require('node:sqlite').DatabaseSync)(workerData.file);
  } finally {
    process.emitWarning = emitWarning;
  }
}
let db;
let timer;
try {
  db = open();
  const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
  let seen = -1;
  const tick = () => {
    let frames = seen;
    try {
      frames = checkpoint.get().log;
    } catch {}
    // Soon again while frames keep arriving; at rest, now and then.
    timer = setTimeout(tick, frames !== seen ? 10 : 250);
    seen = frames;
  };
  tick();
} catch {}
parentPort.once('message', () => {
  clearTimeout(timer);
  try {
    db?.close();
  } catch {}
  parentPort.close();
});
`;

/** The serve's own bound on its WAL, in pages (16 MiB of 4 KiB pages), should the checkpoint thread fall behind. */
export const WAL_FALLBACK_PAGES = 4000;

export interface Checkpointer {
  /** Ends the thread after its checkpoint in progress, its connection closed. */
  stop(): Promise<void>;
}

export function startCheckpointer(file: string): Checkpointer {
  const module = sqliteDriverName() === 'node:sqlite' ? null : require.resolve('better-sqlite3');
  const worker = new Worker(CHECKPOINTER, { eval: true, workerData: { file, module } });
  // Nothing waits on it: a store left open does not hold the process.
  worker.unref();
  const exited = new Promise<void>((resolve) => {
    worker.once('exit', () => resolve());
    worker.once('error', () => resolve());
  });
  return {
    async stop() {
      // Held while it stops: with nothing else alive, an unref'd worker's exit would never come and the process
      // would end with the close still pending (serve on a port in use exited 0, its error unsaid).
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

// --- node:sqlite --------------------------------------------------------------------------------------------------

interface NodeStatement {
  run(...params: unknown[]): { changes: number };
  get(...params: unknown[]): Record<string, unknown> | undefined;
  all(...params: unknown[]): Record<string, unknown>[];
  setReturnArrays?(enabled: boolean): void;
}

interface NodeDatabase {
  prepare(sql: string): NodeStatement;
  exec(sql: string): void;
  close(): void;
}

type NodeSqliteModule = { DatabaseSync: new (file: string, options?: object) => NodeDatabase };

let nodeSqlite: NodeSqliteModule | undefined;

/** Loads node:sqlite without its ExperimentalWarning (Node.js 22 prints one on load): the user did not choose an
 * experimental feature, and the store's use of it is covered by the same contract suite as better-sqlite3. */
function loadNodeSqlite(): NodeSqliteModule {
  if (nodeSqlite !== undefined) return nodeSqlite;
  const emitWarning = process.emitWarning;
  process.emitWarning = function (this: unknown, warning: string | Error, ...rest: unknown[]) {
    const type = typeof rest[0] === 'string' ? rest[0] : (rest[0] as { type?: string } | undefined)?.type;
    const text = typeof warning === 'string' ? warning : warning.message;
    if (type === 'ExperimentalWarning' && /SQLite/i.test(text)) return;
    return (emitWarning as (...args: unknown[]) => void).call(process, warning, ...rest);
  } as typeof process.emitWarning;
  try {
    nodeSqlite = process.getBuiltinModule('node:sqlite') as unknown as NodeSqliteModule;
  } finally {
    process.emitWarning = emitWarning;
  }
  return nodeSqlite;
}

// SQLite's result codes by number (extended first), named as better-sqlite3 names them in `err.code`, which is
// what the store reads (busy, locked, a unique key); node:sqlite gives the number in `errcode`.
const EXTENDED_CODES: Record<number, string> = {
  261: 'SQLITE_BUSY_RECOVERY',
  517: 'SQLITE_BUSY_SNAPSHOT',
  773: 'SQLITE_BUSY_TIMEOUT',
  262: 'SQLITE_LOCKED_SHAREDCACHE',
  275: 'SQLITE_CONSTRAINT_CHECK',
  787: 'SQLITE_CONSTRAINT_FOREIGNKEY',
  1299: 'SQLITE_CONSTRAINT_NOTNULL',
  1555: 'SQLITE_CONSTRAINT_PRIMARYKEY',
  2067: 'SQLITE_CONSTRAINT_UNIQUE',
  1032: 'SQLITE_READONLY_DBMOVED',
};
const PRIMARY_CODES: Record<number, string> = {
  1: 'SQLITE_ERROR',
  2: 'SQLITE_INTERNAL',
  3: 'SQLITE_PERM',
  4: 'SQLITE_ABORT',
  5: 'SQLITE_BUSY',
  6: 'SQLITE_LOCKED',
  7: 'SQLITE_NOMEM',
  8: 'SQLITE_READONLY',
  10: 'SQLITE_IOERR',
  11: 'SQLITE_CORRUPT',
  13: 'SQLITE_FULL',
  14: 'SQLITE_CANTOPEN',
  15: 'SQLITE_PROTOCOL',
  17: 'SQLITE_SCHEMA',
  18: 'SQLITE_TOOBIG',
  19: 'SQLITE_CONSTRAINT',
  20: 'SQLITE_MISMATCH',
  21: 'SQLITE_MISUSE',
  23: 'SQLITE_AUTH',
  25: 'SQLITE_RANGE',
  26: 'SQLITE_NOTADB',
};

/** node:sqlite's error with `code` set to SQLite's code name, as better-sqlite3 sets it. */
function sqliteError(err: unknown): unknown {
  const e = err as { code?: unknown; errcode?: unknown };
  if (e !== null && typeof e === 'object' && e.code === 'ERR_SQLITE_ERROR' && typeof e.errcode === 'number') {
    e.code = EXTENDED_CODES[e.errcode] ?? PRIMARY_CODES[e.errcode & 0xff] ?? 'SQLITE_ERROR';
  }
  return err;
}

function firstColumn(row: Record<string, unknown> | unknown[]): unknown {
  return Array.isArray(row) ? row[0] : Object.values(row)[0];
}

class NodeSqliteStatement<P extends unknown[] | object, R> implements SqliteStatement<P, R> {
  private plucked = false;
  constructor(private readonly stmt: NodeStatement) {}

  run(...params: Params<P>): { changes: number } {
    try {
      return this.stmt.run(...params);
    } catch (err) {
      throw sqliteError(err);
    }
  }

  get(...params: Params<P>): R | undefined {
    let row;
    try {
      row = this.stmt.get(...params);
    } catch (err) {
      throw sqliteError(err);
    }
    return (row !== undefined && this.plucked ? firstColumn(row) : row) as R | undefined;
  }

  all(...params: Params<P>): R[] {
    let rows;
    try {
      rows = this.stmt.all(...params);
    } catch (err) {
      throw sqliteError(err);
    }
    return (this.plucked ? rows.map(firstColumn) : rows) as R[];
  }

  pluck(): SqliteStatement<P, R> {
    this.plucked = true;
    // Arrays where Node.js has them (22.16 and later): no object per row for a value.
    this.stmt.setReturnArrays?.(true);
    return this;
  }
}

class NodeSqliteDatabase implements SqliteDatabase {
  private isOpen = true;

  private constructor(private readonly db: NodeDatabase) {}

  static open(file: string, options: OpenOptions): NodeSqliteDatabase {
    const { DatabaseSync } = loadNodeSqlite();
    let db: NodeDatabase;
    try {
      db = new DatabaseSync(file, { timeout: options.timeout });
    } catch (err) {
      throw sqliteError(err);
    }
    const driver = new NodeSqliteDatabase(db);
    // The timeout option is Node.js 22.16's; the pragma sets the same on 22.13.
    driver.exec(`PRAGMA busy_timeout = ${Math.trunc(options.timeout)}`);
    return driver;
  }

  get open(): boolean {
    return this.isOpen;
  }

  prepare<P extends unknown[] | object = unknown[], R = unknown>(sql: string): SqliteStatement<P, R> {
    try {
      return new NodeSqliteStatement<P, R>(this.db.prepare(sql));
    } catch (err) {
      throw sqliteError(err);
    }
  }

  exec(sql: string): void {
    try {
      this.db.exec(sql);
    } catch (err) {
      throw sqliteError(err);
    }
  }

  pragma(source: string, options?: { simple?: boolean }): unknown {
    const stmt = this.prepare<unknown[], Record<string, unknown>>(`PRAGMA ${source}`);
    if (options?.simple) return stmt.pluck().get();
    return stmt.all();
  }

  close(): void {
    if (!this.isOpen) return;
    this.isOpen = false;
    this.db.close();
  }
}
