// The local emulator of the service: startEmulator() for the CLI, plus store-level helpers that need no HTTP.
import type { AddressInfo } from 'node:net';
import { resolveConfig, type EmulatorConfig } from './config.js';
import { prepareDataDir } from './datadir.js';
import { GAME_ID, NAMESPACE_ID } from './ids.js';
import { buildView } from './builds.js';
import { stopLobbyInStore, type StopOptions } from './lobbies.js';
import { createEmulatorServer } from './server.js';
import { Store } from './store.js';
import { signToken } from './tokens.js';

export { DEFAULT_CONFIG, type EmulatorConfig } from './config.js';
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
}

/** The tokens of a data directory; they depend only on its secret, so they survive restarts. */
export function emulatorTokens(dataDir: string): RunningEmulator['tokens'] {
  const { secret } = prepareDataDir(dataDir);
  return tokensFor(secret);
}

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
  const host = opts.host ?? '127.0.0.1';
  const { paths, secret } = prepareDataDir(opts.dataDir);
  const store = Store.open(paths.db);
  const state = { store, secret, config, paths, endpoint: '', tokenCache: new Map() };
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

/** The builds of a data directory, newest first (same shape as GET /_emulator/builds). */
export function listBuilds(dataDir: string): ReturnType<typeof buildView>[] {
  return withStore(dataDir, (store) => store.listBuilds().map(buildView));
}

/** Stops a lobby and returns its logs summary (as POST /_emulator/lobbies/{id}/stop), or null when unknown. */
export function stopLobby(dataDir: string, lobbyId: string, opts: StopOptions = {}): Record<string, unknown> | null {
  return withStore(dataDir, (store) => stopLobbyInStore(store, lobbyId.toLowerCase(), opts, Date.now()));
}

function withStore<T>(dataDir: string, use: (store: Store) => T): T {
  const { paths } = prepareDataDir(dataDir);
  const store = Store.open(paths.db);
  try {
    return use(store);
  } finally {
    store.close();
  }
}
