// The local emulator of the service, wired together: routes (routes/) -> services (services/) -> stores (stores/).
// startEmulator() for the CLI and tests, and the data directory's own helpers (whether it holds a store, reset).
import { existsSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { resolveConfig, type EmulatorConfig } from './config.js';
import { DATA_DIR_ENTRIES, dataDirPaths, prepareDataDir } from './datadir.js';
import { parseFaults } from './faults.js';
import { createEmulatorServer, type Front } from './routes/server.js';
import { tokensFor, type EmulatorTokens } from './services/auth.js';
import { systemClock, type Clock } from './services/clock.js';
import { GAME_ID, NAMESPACE_ID } from './services/ids.js';
import { createServices, type Services } from './services/index.js';
import { BucketSettingsError, checkBucketPartSize, describeBucket, type BucketSettings } from './stores/bucket.js';
import { LocalBlobStore } from './stores/local-blobs.js';
import { SqliteStore } from './stores/sqlite.js';
import type { BlobStore } from './stores/store.js';

export { DEFAULT_CONFIG, type EmulatorConfig } from './config.js';
export { DEVIATIONS, type Deviation } from './deviations.js';
export { ManualClock, type Clock } from './services/clock.js';
export { GAME_ID, NAMESPACE_ID } from './services/ids.js';
export type { Services } from './services/index.js';
export type { StopOptions } from './services/lobbies.js';
export { BucketSettingsError, type BucketSettings } from './stores/bucket.js';

export interface RunningEmulator {
  /** e.g. http://127.0.0.1:54321, no trailing slash. */
  endpoint: string;
  gameId: string;
  namespaceId: string;
  tokens: EmulatorTokens;
  /** The services behind the routes, for tests and tools that act on state without HTTP. */
  services: Services;
  /** Stops the server and closes the database. */
  close(): Promise<void>;
}

export interface StartEmulatorOptions {
  dataDir: string;
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: an ephemeral port. */
  port?: number;
  config?: Partial<EmulatorConfig>;
  /** A fault spec such as `put-error=0.1,latency=50ms` (see faults.ts). */
  faults?: string;
  /** Default: the wall clock. Tests pass a ManualClock and move it instead of sleeping. */
  clock?: Clock;
  /** Keep builds and exports in this S3-compatible bucket instead of the data directory. */
  bucket?: BucketSettings;
}

/** A host as it appears in a URL; wildcard binds are reached through loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The services over a data directory's stores (and a bucket's, when given); close the store when done. */
async function open(
  dataDir: string,
  config: EmulatorConfig,
  clock: Clock,
  bucket: BucketSettings | undefined,
): Promise<{ services: Services; store: SqliteStore; secret: Buffer }> {
  if (bucket) checkBucketPartSize(config.partSize);
  const { paths, secret } = prepareDataDir(dataDir);
  const store = SqliteStore.open(paths.db);
  let blobs: BlobStore;
  if (bucket) {
    // Loaded only for a bucket: the embedded emulator never pays for the signer.
    const { S3BlobStore } = await import('./stores/s3-blobs.js');
    blobs = new S3BlobStore(bucket);
    // A wrong name, endpoint or key is said at start, not at the first push.
    try {
      await blobs.ping();
    } catch (err) {
      await store.close();
      throw new BucketSettingsError(`the bucket ${describeBucket(bucket)} does not answer (${(err as Error).message})`);
    }
  } else {
    blobs = new LocalBlobStore(paths, secret, store);
  }
  return { services: createServices({ store, blobs, clock, config, secret }), store, secret };
}

export async function startEmulator(opts: StartEmulatorOptions): Promise<RunningEmulator> {
  const config = resolveConfig(opts.config);
  const faults = opts.faults ? parseFaults(opts.faults) : undefined;
  const host = opts.host ?? '127.0.0.1';
  const { services, store, secret } = await open(opts.dataDir, config, opts.clock ?? systemClock, opts.bucket);
  const front: Front = { endpoint: '', faults };
  const server = createEmulatorServer(services, front);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  front.endpoint = `http://${urlHost(host)}:${port}`;

  let closing: Promise<void> | null = null;
  return {
    endpoint: front.endpoint,
    gameId: GAME_ID,
    namespaceId: NAMESPACE_ID,
    tokens: tokensFor(secret),
    services,
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve(store.close()));
        // Keep-alive and in-flight connections would hold close() open; end them now.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/**
 * Deletes what the emulator keeps in a data directory (store, secret, uploads, builds) and the directory itself
 * when nothing else is left in it; other files are never touched. Returns the entries removed.
 */
export function resetDataDir(dataDir: string): string[] {
  const removed: string[] = [];
  for (const name of DATA_DIR_ENTRIES) {
    const entry = join(dataDir, name);
    if (!existsSync(entry)) continue;
    rmSync(entry, { recursive: true, force: true });
    removed.push(name);
  }
  if (existsSync(dataDir) && readdirSync(dataDir).length === 0) rmdirSync(dataDir);
  return removed;
}

/** Whether a data directory holds an emulator's store; asking never creates one. */
export function holdsStore(dataDir: string): boolean {
  return existsSync(dataDirPaths(dataDir).db);
}
