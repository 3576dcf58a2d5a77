// Which stores an emulator runs on, chosen from its options: SQLite and local files in the data directory by
// default; PostgreSQL for the records when given a database URL; an S3-compatible bucket for the bytes when given
// one. The one place that opens stores.
import { dataDirFailure, loadSecret, prepareDataDir, type DataDirPaths } from '../datadir.js';
import { BucketSettingsError, describeBucket, type BucketSettings } from './bucket.js';
import { LocalBlobStore } from './local-blobs.js';
import { SqliteStore } from './sqlite.js';
import type { BlobStore, LocalObjectIndex, Store } from './store.js';
import type { OperatorLog } from '../operator-log.js';
import { filesUnavailable, postgresUnavailable, reportUnavailable, sqliteUnavailable, tellOperator, type StoreName, type Tell } from './unavailable.js';

export interface StoreOptions {
  /** Where local files (and, without `database`, the SQLite store and its secret) live. */
  dataDir: string;
  /** A postgres:// or postgresql:// URL: the records in PostgreSQL instead of SQLite. */
  database?: string;
  /** The signing secret of tokens and presigned URLs; default: the store's own (made once, then shared). */
  secret?: string;
  /** Keep builds and exports in this S3-compatible bucket instead of the data directory. */
  bucket?: BucketSettings;
  /** The longest a query or a bucket request may take (EmulatorConfig.storeTimeoutMs); default that default. */
  timeoutMs?: number;
  /** A long-running serve's SQLite store checkpoints its WAL on a thread of its own (SqliteStore.open). */
  checkpointThread?: boolean;
  /** Where the whole error of a store that does not answer is told (answers say it without paths or hosts). */
  operatorLog?: OperatorLog;
}

/** What is in use, for the start line and --verbose: a kind, and where (credentials removed). */
export interface StoresInUse {
  records: { kind: 'sqlite' | 'postgres'; location: string };
  bytes: { kind: 'local' | 's3'; location: string };
}

export interface OpenStores {
  /** Its failures that mean it does not answer are 503 STORE_UNAVAILABLE naming it (see unavailable.ts). */
  store: Store;
  /** The same. */
  blobs: BlobStore;
  secret: Buffer;
  inUse: StoresInUse;
  /** What each is called in those answers and in health. */
  names: { records: StoreName; bytes: StoreName };
  /** Tells the operator's log a store's whole error (tellOperator). */
  tell: Tell;
}

/** A secret given as text: its UTF-8 bytes, at least 32 of them (the length of the secret the store makes). */
export function secretFromText(text: string): Buffer {
  const secret = Buffer.from(text, 'utf8');
  if (secret.length < 32) throw new Error(`the emulator secret must be at least 32 bytes; this one has ${secret.length}`);
  return secret;
}

/** The bytes: the bucket when one is given (checked now, so a wrong name, endpoint or key is said at start, not at
 * the first push), else files in the data directory indexed by the store. */
async function openBlobs(
  opts: StoreOptions,
  paths: DataDirPaths,
  secret: Buffer,
  index: LocalObjectIndex,
  tell: OpenStores['tell'],
): Promise<{ blobs: BlobStore; bytes: StoresInUse['bytes'] }> {
  if (opts.bucket === undefined) {
    const local = new LocalBlobStore(paths, secret, index);
    // Parts and builds are written here: a directory that cannot be is said at start, not at the first push.
    await local.ping().catch((err: unknown) => Promise.reject(dataDirFailure(paths.root, err)));
    const blobs = reportUnavailable(local, 'data directory', filesUnavailable, tell);
    return { blobs, bytes: { kind: 'local', location: paths.root } };
  }
  // Loaded only for a bucket: the embedded emulator never pays for the signer.
  const { S3BlobStore, bucketUnavailable } = await import('./s3-blobs.js');
  const blobs = new S3BlobStore(opts.bucket, opts.timeoutMs);
  try {
    await blobs.ping();
  } catch (err) {
    // An answer is not silence: a missing bucket and refused keys are said as what they are.
    const status = (err as { status?: number }).status;
    const what = status === 404 ? 'does not exist' : status === 401 || status === 403 ? 'refused the credentials' : 'does not answer';
    throw new BucketSettingsError(`the bucket ${describeBucket(opts.bucket)} ${what} (${(err as Error).message})`);
  }
  return { blobs: reportUnavailable(blobs, 'bucket', bucketUnavailable, tell), bytes: { kind: 's3', location: describeBucket(opts.bucket) } };
}

/** Runs one start-up step on the data directory; its failure to read or write there is said as such (DataDirError). */
function onDataDir<T>(root: string, step: () => T): T {
  try {
    return step();
  } catch (err) {
    throw dataDirFailure(root, err);
  }
}

/** Opens the stores; nothing stays open when this throws. */
export async function openStores(opts: StoreOptions): Promise<OpenStores> {
  const given = opts.secret === undefined ? undefined : secretFromText(opts.secret);
  const paths = onDataDir(opts.dataDir, () => prepareDataDir(opts.dataDir));
  const tell = tellOperator(opts.operatorLog ?? (() => {}));
  if (opts.database !== undefined) {
    const [{ PostgresStore }, { redactUrl }] = await Promise.all([import('./postgres.js'), import('../../shared/redact.js')]);
    const opened = await PostgresStore.open({ connectionString: opts.database, timeoutMs: opts.timeoutMs });
    try {
      const secret = given ?? (await opened.secret());
      // The blob store's index is the wrapped store: its failures are named as the database's too.
      const store = reportUnavailable(opened, 'database', postgresUnavailable, tell);
      const { blobs, bytes } = await openBlobs(opts, paths, secret, store, tell);
      const names = { records: 'database', bytes: bytes.kind === 's3' ? 'bucket' : 'data directory' } as const;
      return { store, blobs, secret, names, tell, inUse: { records: { kind: 'postgres', location: redactUrl(opts.database) }, bytes } };
    } catch (err) {
      await opened.close();
      throw err;
    }
  }
  const secret = given ?? onDataDir(paths.root, () => loadSecret(paths.secret));
  const opened = onDataDir(paths.root, () => SqliteStore.open(paths.db, opts.timeoutMs, opts.checkpointThread ? 'thread' : 'commit'));
  try {
    const store = reportUnavailable(opened, 'data directory', sqliteUnavailable, tell);
    const { blobs, bytes } = await openBlobs(opts, paths, secret, store, tell);
    const names = { records: 'data directory', bytes: bytes.kind === 's3' ? 'bucket' : 'data directory' } as const;
    return { store, blobs, secret, names, tell, inUse: { records: { kind: 'sqlite', location: paths.db }, bytes } };
  } catch (err) {
    await opened.close();
    throw err;
  }
}
