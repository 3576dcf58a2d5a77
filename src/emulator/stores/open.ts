// Which stores an emulator runs on, chosen from its options: SQLite and local files in the data directory by
// default; PostgreSQL for the records when given a database URL. The one place that opens stores.
import { loadSecret, prepareDataDir } from '../datadir.js';
import { LocalBlobStore } from './local-blobs.js';
import { SqliteStore } from './sqlite.js';
import type { BlobStore, Store } from './store.js';

export interface StoreOptions {
  /** Where local files (and, without `database`, the SQLite store and its secret) live. */
  dataDir: string;
  /** A postgres:// or postgresql:// URL: the records in PostgreSQL instead of SQLite. */
  database?: string;
  /** The signing secret of tokens and presigned URLs; default: the store's own (made once, then shared). */
  secret?: string;
}

/** What is in use, for the start line and --verbose: a kind, and where (credentials removed). */
export interface StoresInUse {
  records: { kind: 'sqlite' | 'postgres'; location: string };
  bytes: { kind: 'local'; location: string };
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

/** Opens the stores; nothing stays open when this throws. */
export async function openStores(opts: StoreOptions): Promise<OpenStores> {
  const given = opts.secret === undefined ? undefined : secretFromText(opts.secret);
  const paths = prepareDataDir(opts.dataDir);
  if (opts.database !== undefined) {
    const [{ PostgresStore }, { redactUrl }] = await Promise.all([import('./postgres.js'), import('../../config/redact.js')]);
    const store = await PostgresStore.open({ connectionString: opts.database });
    try {
      const secret = given ?? (await store.secret());
      return {
        store,
        blobs: new LocalBlobStore(paths, secret, store),
        secret,
        inUse: { records: { kind: 'postgres', location: redactUrl(opts.database) }, bytes: { kind: 'local', location: paths.root } },
      };
    } catch (err) {
      await store.close();
      throw err;
    }
  }
  const secret = given ?? loadSecret(paths.secret);
  const store = SqliteStore.open(paths.db);
  return {
    store,
    blobs: new LocalBlobStore(paths, secret, store),
    secret,
    inUse: { records: { kind: 'sqlite', location: paths.db }, bytes: { kind: 'local', location: paths.root } },
  };
}
