// The local emulator of the service, wired together: routes (routes/) -> services (services/) -> stores (stores/).
// startEmulator() for the CLI and tests, and the data directory's own helpers (whether it holds a store, reset).
import { existsSync, readdirSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import type { Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { resolveConfig, type EmulatorConfig } from './config.js';
import { DATA_DIR_ENTRIES, dataDirPaths, prepareDataDir } from './datadir.js';
export { dataDirHolders, holdDataDir, type ServerHold } from './datadir.js';
import { parseFaults, type Faults } from './faults.js';
import { createEmulatorServer, type Front, type TlsPair } from './routes/server.js';
import { systemClock, type Clock } from './services/clock.js';
import { gameTokens, sweepFailed, type GameTokens } from './services/games.js';
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

// How often a serving emulator removes expired games (any request of an expired game's token also starts it).
const SWEEP_INTERVAL_MS = 60_000;

export interface RunningEmulator {
  /** e.g. http://127.0.0.1:54321, no trailing slash. */
  endpoint: string;
  gameId: string;
  namespaceId: string;
  tokens: GameTokens;
  /** The services behind the routes, for tests and tools that act on state without HTTP. */
  services: Services;
  /** Reads the TLS certificate and key files again (SIGHUP); the old pair stays when the new one is bad. */
  reloadTls(): void;
  /** Stops the server and closes the database. */
  close(): Promise<void>;
}

/** PEM files of a certificate chain and its key. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
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
  /** When set, the admin routes (`/_emulator/*` but health) answer only requests that carry it. */
  adminToken?: string;
  /** Serve HTTPS with these. */
  tls?: TlsFiles;
}

function readTls(files: TlsFiles): TlsPair {
  return { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
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
  faults: Faults | undefined,
  adminToken: string | undefined,
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
  return { services: createServices({ store, blobs, clock, config, secret, faults, adminToken }), store, secret };
}

export async function startEmulator(opts: StartEmulatorOptions): Promise<RunningEmulator> {
  const config = resolveConfig(opts.config);
  const faults = opts.faults ? parseFaults(opts.faults) : undefined;
  const host = opts.host ?? '127.0.0.1';
  // Read before anything is opened, so a missing file leaves nothing to close.
  const tls = opts.tls ? readTls(opts.tls) : undefined;
  const { services, store, secret } = await open(opts.dataDir, config, opts.clock ?? systemClock, opts.bucket, faults, opts.adminToken);
  const front: Front = { endpoint: '', faults };
  const server = createEmulatorServer(services, front, tls);
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
  front.endpoint = `${tls ? 'https' : 'http'}://${urlHost(host)}:${port}`;
  // Each replica sweeps; a game is claimed by one of them. Unref'd: it never keeps a process alive.
  const sweeper = setInterval(() => void services.games.sweep().catch(sweepFailed), SWEEP_INTERVAL_MS);
  sweeper.unref();

  let closing: Promise<void> | null = null;
  return {
    endpoint: front.endpoint,
    gameId: GAME_ID,
    namespaceId: NAMESPACE_ID,
    tokens: gameTokens(secret, GAME_ID, NAMESPACE_ID),
    services,
    reloadTls() {
      if (opts.tls) (server as TlsServer).setSecureContext(readTls(opts.tls));
    },
    close() {
      clearInterval(sweeper);
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
