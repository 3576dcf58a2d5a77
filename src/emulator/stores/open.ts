// Which stores an emulator runs on, chosen from its options: SQLite and local files in the data directory by
// default; PostgreSQL for the records when given a database URL; an S3-compatible bucket for the bytes when given
// one. The one place that opens stores.
import { loadSecret, prepareDataDir, type DataDirPaths } from '../datadir.js';
import { BucketSettingsError, describeBucket, type BucketSettings } from './bucket.js';
import { LocalBlobStore } from './local-blobs.js';
import { SqliteStore } from './sqlite.js';
import type { BlobStore, LocalObjectIndex, Store } from './store.js';

export interface StoreOptions {
  /** Where local files (and, without `database`, the SQLite store and its secret) live. */
  dataDir: string;
  /** A postgres:// or postgresql:// URL: the records in PostgreSQL instead of SQLite. */
  database?: string;
  /** The signing secret of tokens and presigned URLs; default: the store's own (made once, then shared). */
  secret?: string;
  /** Keep builds and exports in this S3-compatible bucket instead of the data directory. */
  bucket?: BucketSettings;
}

/** What is in use, for the start line and --verbose: a kind, and where (credentials removed). */
export interface StoresInUse {
  records: { kind: 'sqlite' | 'postgres'; location: string };
  bytes: { kind: 'local' | 's3'; location: string };
}

export interface OpenStores {
  store: Store;
  blobs: BlobStore;
  secret: Buffer;
  inUse: StoresInUse;
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
): Promise<{ blobs: BlobStore; bytes: StoresInUse['bytes'] }> {
  if (opts.bucket === undefined) return { blobs: new LocalBlobStore(paths, secret, index), bytes: { kind: 'local', location: paths.root } };
  // Loaded only for a bucket: the embedded emulator never pays for the signer.
  const { S3BlobStore } = await import('./s3-blobs.js');
  const blobs = new S3BlobStore(opts.bucket);
  try {
    await blobs.ping();
  } catch (err) {
    // An answer is not silence: a missing bucket and refused keys are said as what they are.
    const status = (err as { status?: number }).status;
    const what = status === 404 ? 'does not exist' : status === 401 || status === 403 ? 'refused the credentials' : 'does not answer';
    throw new BucketSettingsError(`the bucket ${describeBucket(opts.bucket)} ${what} (${(err as Error).message})`);
  }
  return { blobs, bytes: { kind: 's3', location: describeBucket(opts.bucket) } };
}

/** Opens the stores; nothing stays open when this throws. */
export async function openStores(opts: StoreOptions): Promise<OpenStores> {
  const given = opts.secret === undefined ? undefined : secretFromText(opts.secret);
  const paths = prepareDataDir(opts.dataDir);
  if (opts.database !== undefined) {
    const [{ PostgresStore }, { redactUrl }] = await Promise.all([import('./postgres.js'), import('../../config/redact.js')]);
    const store = await PostgresStore.open({ connectionString: opts.database });
    try {
      const secret = given ?? (await store.secret());
      const { blobs, bytes } = await openBlobs(opts, paths, secret, store);
      return { store, blobs, secret, inUse: { records: { kind: 'postgres', location: redactUrl(opts.database) }, bytes } };
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  const secret = given ?? loadSecret(paths.secret);
  const store = SqliteStore.open(paths.db);
  try {
    const { blobs, bytes } = await openBlobs(opts, paths, secret, store);
    return { store, blobs, secret, inUse: { records: { kind: 'sqlite', location: paths.db }, bytes } };
  } catch (err) {
    await store.close();
    throw err;
  }
}
