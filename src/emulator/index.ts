// The local emulator of the service: startEmulator() for the CLI, plus store-level helpers that need no HTTP.
import { existsSync, readdirSync, rmSync, rmdirSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { resolveConfig, type EmulatorConfig } from './config.js';
import { DATA_DIR_ENTRIES, dataDirPaths, prepareDataDir } from './datadir.js';
import { GAME_ID, NAMESPACE_ID } from './ids.js';
import { buildView } from './builds.js';
import { stopLobbyInStore, type StopOptions } from './lobbies.js';
import { createEmulatorServer } from './server.js';
import { parseFaults } from './faults.js';
import { Store } from './store.js';
import { signToken } from './tokens.js';

export { DEFAULT_CONFIG, type EmulatorConfig } from './config.js';
export { DEVIATIONS, type Deviation } from './deviations.js';
export { GAME_ID, NAMESPACE_ID } from './ids.js';
export type { StopOptions } from './lobbies.js';

export interface RunningEmulator {
  /** e.g. http://127.0.0.1:54321, no trailing slash. */
  endpoint: string;
  gameId: string;
  namespaceId: string;
  tokens: { cloud: string; public: string; dev: string };
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
}

/** The tokens of a data directory; they depend only on its secret, so they survive restarts. */
function tokensFor(secret: Buffer): RunningEmulator['tokens'] {
  return {
    cloud: signToken(secret, { kind: 'cloud', game_id: GAME_ID }),
    public: signToken(secret, { kind: 'pub', game_id: GAME_ID, namespace_id: NAMESPACE_ID }),
    dev: signToken(secret, { kind: 'dev', game_id: GAME_ID, namespace_id: NAMESPACE_ID }),
  };
}

/** A host as it appears in a URL; wildcard binds are reached through loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

export async function startEmulator(opts: StartEmulatorOptions): Promise<RunningEmulator> {
  const config = resolveConfig(opts.config);
  const faults = opts.faults ? parseFaults(opts.faults) : undefined;
  const host = opts.host ?? '127.0.0.1';
  const { paths, secret } = prepareDataDir(opts.dataDir);
  const store = Store.open(paths.db);
  const state = { store, secret, config, paths, endpoint: '', tokenCache: new Map(), faults };
  const server = createEmulatorServer(state);
  try {
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(opts.port ?? 0, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
  } catch (err) {
    store.close();
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  state.endpoint = `http://${urlHost(host)}:${port}`;

  let closing: Promise<void> | null = null;
  return {
    endpoint: state.endpoint,
    gameId: GAME_ID,
    namespaceId: NAMESPACE_ID,
    tokens: tokensFor(secret),
    close() {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => {
          store.close();
          resolve();
        });
        // Keep-alive and in-flight connections would hold close() open; end them now.
        server.closeAllConnections();
      });
      return closing;
    },
  };
}

/** The builds of a data directory, newest first (same shape as GET /_emulator/builds); none when it holds no store. */
export function listBuilds(dataDir: string): ReturnType<typeof buildView>[] {
  return withStore(dataDir, [], (store) => store.listBuilds().map(buildView));
}

/** Stops a lobby and returns its logs summary (as POST /_emulator/lobbies/{id}/stop), or null when unknown. */
export function stopLobby(dataDir: string, lobbyId: string, opts: StopOptions = {}): Record<string, unknown> | null {
  return withStore(dataDir, null, (store) => stopLobbyInStore(store, lobbyId.toLowerCase(), opts, Date.now()));
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

/** Opens the store only when the directory has one, so reading never creates a data directory. */
function withStore<T, E>(dataDir: string, absent: E, use: (store: Store) => T): T | E {
  if (!holdsStore(dataDir)) return absent;
  const { paths } = prepareDataDir(dataDir);
  const store = Store.open(paths.db);
  try {
    return use(store);
  } finally {
    store.close();
  }
}
