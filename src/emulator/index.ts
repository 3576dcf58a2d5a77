// The local emulator of the service, wired together: routes (routes/) -> services (services/) -> stores (stores/).
// startEmulator() for the CLI and tests, and the data directory's own helpers (whether it holds a store, reset).
import { existsSync, readdirSync, readFileSync, rmSync, rmdirSync } from 'node:fs';
import type { Server as TlsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { commandFor, resolveConfig, type EmulatorConfig } from './config.js';
import { DATA_DIR_ENTRIES, dataDirPaths, dataDirReplicaId } from './datadir.js';
export { dataDirHolders, holdDataDir, type ServerHold } from './datadir.js';
import { parseFaults } from './faults.js';
import { InternalErrors } from './operator-log.js';
import { createEmulatorServer, type Front, type TlsPair } from './routes/server.js';
import { checkAdminToken } from './services/admin.js';
import { systemClock, type Clock } from './services/clock.js';
import { gameTokens, type GameTokens } from './services/games.js';
import { GAME_ID, NAMESPACE_ID } from './services/ids.js';
import { LOBBY_PIDS_LIMIT, LOBBY_TIER } from './services/environment.js';
import { createServices, type Services } from './services/index.js';
import { recordStop } from './services/lobbies.js';
import { lobbyToken } from './services/lobby-calls.js';
import { LobbyLogs, type LogWatchTiming } from './services/logs.js';
import { checkBucketPartSize } from './stores/bucket.js';
import { openStores, type StoreOptions, type StoresInUse } from './stores/open.js';
import type { LobbyServersOptions } from './runtime/servers.js';

export { DEFAULT_CONFIG, type EmulatorConfig } from './config.js';
export { DEVIATIONS, type Deviation } from './deviations.js';
export { EmulatorFailure, type FailureCode } from './errors.js';
export { ManualClock, type Clock } from './services/clock.js';
export { AdminTokenError } from './services/admin.js';
export { GAME_ID, NAMESPACE_ID } from './services/ids.js';
export type { Services } from './services/index.js';
export type { StopOptions } from './services/lobbies.js';
export { BucketSettingsError, type BucketSettings } from './stores/bucket.js';
export type { StoresInUse } from './stores/open.js';

// How often a serving emulator removes expired games (any request of an expired game's token also starts it).
const SWEEP_INTERVAL_MS = 60_000;
// How often an emulator running lobbies' servers looks for their lobbies stopped in the store (by another replica,
// the idle lifetime, the ready window, a deleted game): one read per server it runs.
const SERVER_SWEEP_INTERVAL_MS = 1_000;

export interface RunningEmulator {
  /** e.g. http://127.0.0.1:54321, no trailing slash. */
  endpoint: string;
  gameId: string;
  namespaceId: string;
  tokens: GameTokens;
  /** The services behind the routes, for tests and tools that act on state without HTTP. */
  services: Services;
  /** Which stores it runs on, and where (credentials removed). */
  stores: StoresInUse;
  /** Reads the TLS certificate and key files again (SIGHUP); the old pair stays when the new one is bad. */
  reloadTls(): void;
  /**
   * Stops the server and closes the stores. With graceMs, stops accepting and lets the requests in flight finish
   * for up to that long before ending the connections; without, ends them at once.
   */
  close(opts?: { graceMs?: number }): Promise<void>;
}

/** PEM files of a certificate chain and its key. */
export interface TlsFiles {
  certFile: string;
  keyFile: string;
}

export interface StartEmulatorOptions extends StoreOptions {
  /** Default 127.0.0.1. */
  host?: string;
  /** Default 0: an ephemeral port. */
  port?: number;
  config?: Partial<EmulatorConfig>;
  /** A fault spec such as `put-error=0.1,latency=50ms` (see faults.ts). */
  faults?: string;
  /** Default: the wall clock. Tests pass a ManualClock and move it instead of sleeping. */
  clock?: Clock;
  /**
   * When set, the admin routes (`/_emulator/*` but health) answer only requests that carry it; at least
   * ADMIN_TOKEN_MIN_LENGTH characters (AdminTokenError).
   */
  adminToken?: string;
  /** Serve HTTPS with these. */
  tls?: TlsFiles;
  /** How a logs watch waits; tests shorten it. */
  logWatch?: Partial<LogWatchTiming>;
  /**
   * Where `runBuild` finds Docker (DOCKER_HOST, as the docker CLI reads it), and the values of `passEnv`'s names;
   * default: this process's environment.
   */
  env?: Record<string, string | undefined>;
  /**
   * `runBuild`'s containers: `bridge` (the default) isolated on a network of their own, calling a listener that
   * serves them the lobby routes alone; `host` on this host's network, loopback and admin routes included (for
   * one's own build on one's own machine).
   */
  containerNetwork?: 'bridge' | 'host';
  /**
   * Readiness `run`: how often a server is sampled for its lobby's metrics, its stop's grace period, and the idle
   * collection's wait and call (tests shorten and watch them).
   */
  runtime?: Pick<LobbyServersOptions, 'sampleEveryMs' | 'stopGraceMs' | 'idleCollectMs' | 'collect'>;
}

function readTls(files: TlsFiles): TlsPair {
  return { cert: readFileSync(files.certFile), key: readFileSync(files.keyFile) };
}

function listen(server: import('node:http').Server, port: number, host: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** A host as it appears in a URL; wildcard binds are reached through loopback. */
function urlHost(host: string): string {
  if (host === '0.0.0.0') return '127.0.0.1';
  if (host === '::' || host === '[::]') return '[::1]';
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

// Emulators this process has started that run servers: each names its cgroups and record with its number.
let emulatorInstances = 0;

export async function startEmulator(opts: StartEmulatorOptions): Promise<RunningEmulator> {
  const config = resolveConfig(opts.config);
  const faults = opts.faults ? parseFaults(opts.faults) : undefined;
  const operatorLog = opts.operatorLog ?? ((message: string) => console.error(`[emulator] ${message}`));
  const host = opts.host ?? '127.0.0.1';
  if (opts.adminToken !== undefined) checkAdminToken(opts.adminToken);
  // Read before anything is opened, so a missing file leaves nothing to close.
  const tls = opts.tls ? readTls(opts.tls) : undefined;
  // A bucket refuses parts under 5 MiB at completion: said before anything is opened.
  if (opts.bucket) checkBucketPartSize(config.partSize);
  // `--run-build`: Docker first (none: refused in one line before anything is opened), and what a dead emulator of
  // this data directory left in it removed.
  const builds =
    config.runBuild === null
      ? undefined
      : await (await import('./runtime/builds.js')).startBuildRunner({
          tag: config.runBuild,
          dataDir: opts.dataDir,
          host,
          network: opts.containerNetwork,
          env: opts.env,
          maxImageBytes: config.maxImageBytes,
          warn: (message) => console.error(`[emulator] ${message}`),
        });
  if (builds !== undefined && builds.swept > 0) console.error(`[emulator] removed ${builds.swept} container(s) an emulator of this data directory left when it stopped`);
  let opened: Awaited<ReturnType<typeof openStores>>;
  try {
    opened = await openStores({ ...opts, operatorLog, timeoutMs: config.storeTimeoutMs });
  } catch (err) {
    await builds?.close().catch(() => {});
    throw err;
  }
  const { store, blobs, secret, inUse, names, tell } = opened;
  const clock = opts.clock ?? systemClock;
  // Built before the services: the runner writes its servers' lines through it, and the logs routes read them.
  const logs = new LobbyLogs({ store, blobs, clock, config, logWatch: opts.logWatch });
  // Requests from the containers' addresses get the lobby routes alone, whichever listener they reach (a wildcard --host).
  const front: Front = { endpoint: '', faults, containerSubnet: builds?.containerListener?.subnet };
  // What containers call: a listener of the lobby routes alone, on this host's address on their network; plain HTTP,
  // as the traffic never leaves this host.
  const containerFront: Front = { endpoint: '', faults, lobbyRoutesOnly: true };
  // The runtime (process and container runners, their metrics libraries) is loaded only where lobbies run a server.
  // Built before the services, which are given it; its servers' exits come back as stops written to the store.
  let servers: import('./runtime/servers.js').LobbyServers | undefined;
  try {
    if (config.readiness === 'run') {
      const { LobbyServers, OWNER_GONE_EXIT_CODE, serverOwner } = await import('./runtime/servers.js');
      // This replica's id and process: the store's owner of its lobbies, and on the labels of its containers.
      const owner = await serverOwner(config.replica ?? dataDirReplicaId(opts.dataDir));
      // What a killed predecessor on this data directory left running (setsid'd children, whole cgroups) goes first.
      const { sweepLeftovers, RunRecord } = await import('./runtime/leftovers.js');
      const swept = await sweepLeftovers(opts.dataDir, owner.replica);
      // Emulators in one process (tests, tools) have cgroups and records of their own.
      const named = { ...owner, instance: emulatorInstances++ };
      if (swept > 0) console.error(`[emulator] ended ${swept} ${swept === 1 ? 'server' : 'servers'} that an emulator of this data directory left running when it was killed`);
      // Commands run each in a cgroup of its lobby's where this process may make one (Linux); else in a process group.
      const cgroups =
        config.runBuild === null && process.platform === 'linux'
          ? await (await import('./runtime/cgroup.js')).Cgroups.open({ replica: owner.replica, owner: named, limits: { memory: LOBBY_TIER.memoryMax, pids: LOBBY_PIDS_LIMIT } })
          : undefined;
      if (config.runBuild === null && process.platform === 'linux' && cgroups === undefined)
        console.error("[emulator] lobbies' servers run in process groups: this process may make no cgroup; what a server starts in a session of its own (setsid) can outlive its lobby");
      const record = new RunRecord(opts.dataDir, named, cgroups?.ownerDirs ?? []);
      // A pushed build in a container (--run-build), else a command: the game mode's own, else `run`.
      const how: LobbyServersOptions['how'] =
        builds?.resolver(store, blobs, owner) ??
        ((_game, lobby) => {
          const command = commandFor(config, lobby.game_mode);
          if (command === undefined) throw new Error(`no command runs game mode ${lobby.game_mode}: give run, or its own in gameModeSettings`);
          return { command };
        });
      // An emulator that runs servers may run hundreds in a day and wait between them: what they grew goes back
      // (with the collection LobbyServers makes once none runs).
      (await import('./runtime/collect.js')).keepYoungGenerationSmall();
      const env = opts.env ?? process.env;
      const unset = config.passEnv.filter((name) => env[name] === undefined);
      if (unset.length > 0) console.error(`[emulator] --pass-env ${unset.join(', ')}: not set in this environment, so servers do not get ${unset.length === 1 ? 'it' : 'them'}`);
      servers = new LobbyServers({
        cgroups,
        record,
        passEnv: Object.fromEntries(config.passEnv.flatMap((name) => (env[name] === undefined ? [] : [[name, env[name]!]]))),
        how,
        workRoot: join(opts.dataDir, 'lobbies'),
        store,
        onExit: (lobbyId, stop) => recordStop(store, clock.now(), lobbyId, stop),
        lobbyToken: (game, lobbyId) => lobbyToken(secret, game, lobbyId),
        logs,
        endpoint: () => front.endpoint,
        containerEndpoint: () => containerFront.endpoint,
        warn: (message) => console.error(`[emulator] ${message}`),
        owner,
        maxRunning: config.maxRunningLobbies,
        readyWindowMs: config.readyWindowMs,
        now: () => clock.now(),
        ...opts.runtime,
      });
      // Before serving: the lobbies a dead predecessor of this replica left running are stopped, and its servers killed.
      const recovered = await servers.recover(clock.now());
      if (recovered > 0)
        console.error(`[emulator] stopped ${recovered} ${recovered === 1 ? 'lobby' : 'lobbies'} whose servers this replica ran before it restarted (exit code ${OWNER_GONE_EXIT_CODE}, failed)`);
    }
  } catch (err) {
    await servers?.close();
    await store.close();
    await builds?.close().catch(() => {});
    throw err;
  }
  const internal = new InternalErrors(operatorLog);
  const services = createServices({ store, blobs, names, tell, internal, clock, config, secret, faults, adminToken: opts.adminToken, logs, runner: servers });
  const server = createEmulatorServer(services, front, internal, tls);
  const containerServer = builds?.containerListener && createEmulatorServer(services, containerFront, internal);
  try {
    await services.builds.removeLeftovers();
    if (builds !== undefined) {
      // The images of builds deleted while no serve ran (or before a kill) go now; a deleted build's image, at once.
      const removed = await builds.sweepImages(store).catch(imageSweepFailed);
      if (removed) console.error(`[emulator] removed ${removed} image(s) of builds this emulator no longer has`);
      services.builds.onDeleted = (buildId) => builds.images.remove([buildId]).then(() => {}, imageSweepFailed);
    }
    await listen(server, opts.port ?? 0, host);
    if (containerServer) {
      const at = builds!.containerListener!;
      await listen(containerServer, 0, at.bindTo).catch(async (err: NodeJS.ErrnoException) => {
        if (err.code !== 'EADDRNOTAVAIL') throw err;
        const { RunnerError } = await import('./runtime/runtime.js');
        throw new RunnerError(
          `the containers' network gateway ${at.bindTo} is not an address of this host (a rootless daemon, or one in a VM): run your own build with --container-network host`,
        );
      });
      containerFront.endpoint = `http://${urlHost(at.callAt)}:${(containerServer.address() as AddressInfo).port}`;
    }
  } catch (err) {
    await servers?.close();
    server.close();
    containerServer?.close();
    await store.close();
    await builds?.close().catch(() => {});
    throw err;
  }
  const { port } = server.address() as AddressInfo;
  front.endpoint = `${tls ? 'https' : 'http'}://${urlHost(host)}:${port}`;
  // Each replica sweeps; a game is claimed by one of them. Unref'd: it never keeps a process alive.
  // Uploads whose part URLs expired are swept on the same beat.
  const sweeper = setInterval(
    () =>
      void Promise.all([services.games.sweep(), services.builds.sweep(), services.logs.sweep(), builds?.sweepImages(store).catch(imageSweepFailed)]).catch((err: unknown) =>
        internal.tell('a sweep of expired games, uploads and logs', err),
      ),
    SWEEP_INTERVAL_MS,
  );
  sweeper.unref();
  const serverSweeper = servers && setInterval(() => void servers.sweep(clock.now()).catch((err: unknown) => internal.tell("a sweep of lobbies' servers", err)), SERVER_SWEEP_INTERVAL_MS);
  serverSweeper?.unref();

  let closing: Promise<void> | null = null;
  return {
    endpoint: front.endpoint,
    gameId: GAME_ID,
    namespaceId: NAMESPACE_ID,
    tokens: gameTokens(secret, GAME_ID, NAMESPACE_ID),
    services,
    stores: inUse,
    reloadTls() {
      if (opts.tls) (server as TlsServer).setSecureContext(readTls(opts.tls));
    },
    close(closeOpts = {}) {
      clearInterval(sweeper);
      clearInterval(serverSweeper);
      closing ??= (async () => {
        // Idle updates under way finish (and no more start), so none starts a server or writes after this.
        await services.idleLobbies.close();
        // The lobbies' servers first, while the API they call still answers; their exits record their lobbies stopped.
        await servers?.close();
        // Then the watches of their lines answer with the last of them, and every answer ends its connection.
        logs.close();
        front.closing = containerFront.closing = true;
        const closed = new Promise<void>((resolve) => server.close(() => resolve()));
        const grace = closeOpts.graceMs ?? 0;
        if (grace > 0) {
          // Idle keep-alive connections go now, and each busy one as soon as its answer is sent.
          const deadline = Date.now() + grace;
          let done = false;
          void closed.then(() => (done = true));
          while (!done && Date.now() < deadline) {
            server.closeIdleConnections();
            // Cleared when the server closes first: a pending 20 ms timer would outlive close().
            let tick: NodeJS.Timeout | undefined;
            await Promise.race([closed, new Promise((resolve) => (tick = setTimeout(resolve, 20)))]);
            clearTimeout(tick);
          }
        }
        // Connections still open (keep-alive, or past the grace period) would hold close() open; end them now.
        server.closeAllConnections();
        await closed;
        if (containerServer) {
          // Its callers, the containers, are gone by now.
          const done = new Promise<void>((resolve) => containerServer.close(() => resolve()));
          containerServer.closeAllConnections();
          await done;
        }
        await store.close();
        await builds?.close().catch(() => {});
      })();
      return closing;
    },
  };
}

/** An image sweep that failed (the daemon went away): said, and tried again on the next beat. */
function imageSweepFailed(err: unknown): undefined {
  console.error(`[emulator] the images of deleted builds were not removed (tried again later): ${(err as Error).message}`);
  return undefined;
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
