// The data directory: the SQLite file, the signing secret, upload parts and assembled builds.
import { randomBytes } from 'node:crypto';
import { closeSync, fsyncSync, openSync, readFileSync, readdirSync, rmSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { REPLICA_NAME } from './config.js';
import { EmulatorFailure } from './errors.js';
import { makeDirsSync } from '../shared/make-dirs.js';

export interface DataDirPaths {
  root: string;
  db: string;
  secret: string;
  uploads: string;
  builds: string;
}

const SECRET_BYTES = 32;

/** Every name the emulator creates in a data directory (SQLite adds -wal and -shm beside the database). */
export const DATA_DIR_ENTRIES = ['emulator.db', 'emulator.db-wal', 'emulator.db-shm', 'secret', 'replica', 'uploads', 'builds', 'servers', 'runs', 'lobbies'] as const;

export function dataDirPaths(dataDir: string): DataDirPaths {
  return {
    root: dataDir,
    db: join(dataDir, 'emulator.db'),
    secret: join(dataDir, 'secret'),
    uploads: join(dataDir, 'uploads'),
    builds: join(dataDir, 'builds'),
  };
}

/** The data directory cannot be used (not writable, not a directory, a full disk): one line naming it. */
export class DataDirError extends EmulatorFailure {
  constructor(message: string) {
    super('DATA_DIR_UNUSABLE', message);
    this.name = 'DataDirError';
  }
}

// What the file system and SQLite answer when a directory or its files cannot be read or written. ENOENT too: at
// start-up the directory was just made, so a level that is still not there is one the file system cannot make
// (procfs).
const UNUSABLE_FS = new Set(['EACCES', 'EPERM', 'EROFS', 'ENOSPC', 'EDQUOT', 'EIO', 'ENOTDIR', 'EEXIST', 'ELOOP', 'ENOENT']);
const UNUSABLE_SQLITE = /^SQLITE_(READONLY|CANTOPEN|IOERR|FULL|PERM|NOTADB|CORRUPT)/;

/**
 * The one check of the data directory's failures at start: a failure to read or write it becomes a DataDirError
 * naming the directory and what it needs; any other error is answered as it is.
 */
export function dataDirFailure(root: string, err: unknown): unknown {
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code !== 'string' || !(UNUSABLE_FS.has(code) || UNUSABLE_SQLITE.test(code))) return err;
  const detail = (err as Error).message || code;
  return new DataDirError(`the data directory ${root} must be a directory this user can read and write (${detail})`);
}

/** Blocks the thread; only used at start-up while another process finishes writing. */
export function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** Creates the directories the local blob store writes to; the secret is the Store's business (loadSecret). */
export function prepareDataDir(dataDir: string): DataDirPaths {
  const paths = dataDirPaths(dataDir);
  for (const dir of [paths.root, paths.uploads, paths.builds]) makeDirsSync(dir);
  return paths;
}

/** Creates the secret with O_EXCL so exactly one process writes it; the others read the winner's. */
export function loadSecret(file: string): Buffer {
  const corrupt = (secret: Buffer) => `Emulator secret ${file} is corrupt (${secret.length} bytes); delete it to make a new one.`;
  return createOnce(
    file,
    () => randomBytes(SECRET_BYTES),
    (secret) => (secret.length === SECRET_BYTES ? secret : undefined),
    (secret) => (secret.length > SECRET_BYTES ? corrupt(secret) : undefined),
    corrupt,
  );
}

/**
 * A file made once by whichever of concurrent processes opens it first (O_EXCL), read by all of them once complete:
 * the winner may be between its open and its write, so a reader waits (up to 5 s) until `complete` accepts what it
 * reads. `corrupt` names what can never become complete; `late`, what the 5 s did not see completed.
 */
function createOnce<T>(
  file: string,
  content: () => Buffer,
  complete: (bytes: Buffer) => T | undefined,
  corrupt: (bytes: Buffer) => string | undefined,
  late: (bytes: Buffer) => string,
): T {
  try {
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, content());
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  const deadline = Date.now() + 5000;
  for (;;) {
    const bytes = readFileSync(file);
    const value = complete(bytes);
    if (value !== undefined) return value;
    const why = corrupt(bytes) ?? (Date.now() > deadline ? late(bytes) : undefined);
    if (why !== undefined) throw new Error(why);
    sleepSync(5);
  }
}

/**
 * The replica id of an emulator that runs lobbies' servers over this data directory: the name in its `replica` file,
 * made (random, with O_EXCL so concurrent starts agree) the first time. It stays the same across restarts as long as
 * the data directory does, and tells the lobbies this replica owns apart from other replicas' on a shared database.
 */
export function dataDirReplicaId(dataDir: string): string {
  const file = join(dataDir, 'replica');
  makeDirsSync(dataDir);
  return createOnce(
    file,
    () => Buffer.from(`r-${randomBytes(6).toString('hex')}\n`),
    (bytes) => {
      const text = bytes.toString('utf8');
      return text.endsWith('\n') && REPLICA_NAME.test(text.trim()) ? text.trim() : undefined;
    },
    () => undefined,
    () => `Emulator replica file ${file} holds no replica id; delete it to make a new one.`,
  );
}

// `emulator serve` says it holds a data directory with a file `servers/<pid>.json` (its endpoint, and its process's
// start time), removed when it stops, so `emulator reset` can refuse to delete data a server is still serving and a
// command that would open the emulator in-process there talks to that server instead (serving.ts). A file whose
// process is gone (the server was killed) holds nothing.

export interface ServerHold {
  pid: number;
  endpoint: string;
  /** When the process started (ms since the epoch, as runtime/process.ts's processStart reads it): tells it apart from a later process given its pid. */
  start?: number;
}

const serversDir = (dataDir: string) => join(dataDir, 'servers');

/** Records that this process (started at `start`) serves `dataDir` at `endpoint`; the returned function removes the record. */
export function holdDataDir(dataDir: string, endpoint: string, start?: number): () => void {
  const file = join(serversDir(dataDir), `${process.pid}.json`);
  makeDirsSync(serversDir(dataDir));
  writeFileSync(file, JSON.stringify({ pid: process.pid, endpoint, start } satisfies ServerHold) + '\n', { mode: 0o600 });
  return () => rmSync(file, { force: true });
}

/** The live servers holding `dataDir`, by their records; records of processes that are gone are skipped. */
export function dataDirHolders(dataDir: string): ServerHold[] {
  let names: string[];
  try {
    names = readdirSync(serversDir(dataDir));
  } catch {
    return [];
  }
  const holders: ServerHold[] = [];
  for (const name of names) {
    try {
      const hold = JSON.parse(readFileSync(join(serversDir(dataDir), name), 'utf8')) as ServerHold;
      if (Number.isSafeInteger(hold.pid) && hold.pid > 0 && typeof hold.endpoint === 'string' && isAlive(hold.pid))
        holders.push({ pid: hold.pid, endpoint: hold.endpoint, start: Number.isFinite(hold.start) ? hold.start : undefined });
    } catch {
      // A record half-written or hand-broken holds nothing.
    }
  }
  return holders;
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    // EPERM: the process exists but belongs to someone else.
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
