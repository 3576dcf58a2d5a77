// `--run-build`: each lobby's server is a build pushed to this emulator, run in a container. Docker is reached once,
// when the emulator starts (none: it refuses to start, in one line), and the containers an emulator of this data
// directory left when it died are removed then; each lobby then runs its game's build with the tag given, or its
// newest complete one, from the build's image by ID (images.ts: loaded by content, once, bounded, removed when its
// build is gone or unused).
import type { LobbyVersion } from '../services/environment.js';
import type { Game } from '../services/games.js';
import type { BlobStore, BuildRow, Store } from '../stores/store.js';
import { connectDocker, emulatorNetwork, isDockerDesktop, sweepContainers, type ContainerNetwork } from './docker.js';
import { BuildImages } from './images.js';
import type { HowToRun } from './lobby.js';
import type { ServerOwner } from './servers.js';
import { RunnerError } from './runtime.js';

export interface BuildRunnerOptions {
  /**
   * The image tag of the build to run (`game-server:v1`) for every lobby, or true: the build the lobby's version
   * names for its game mode (docker.image_id), else the game's newest complete build.
   */
  tag: string | true;
  dataDir: string;
  /** The emulator's --host: where a container's ports are published (on its bridge network). */
  host: string;
  /** bridge (the default): isolated on the emulator's network; host: this host's network (--container-network host). */
  network?: 'bridge' | 'host';
  env?: Record<string, string | undefined>;
  /** The largest unpacked image a build may load (the config's maxImageBytes). */
  maxImageBytes?: number;
  /** Where a failure that no request can answer goes (an images record that cannot be written). */
  warn?(message: string): void;
}

/** Where the listener that serves containers the lobby routes alone binds, and the host containers call it at. */
export interface ContainerListener {
  /** This host's address on the containers' network (its gateway), or loopback where Docker Desktop relays. */
  bindTo: string;
  /** The host in the URL the containers are given (RIVET_API_ENDPOINT). */
  callAt: string;
  /** The containers' subnet (CIDR) where this host sees their addresses: its other listeners refuse them all but the lobby routes. */
  subnet?: string;
}

/** What picking a lobby's build reads: one build by its id or tag, or the game's newest complete one. */
export type BuildLookup = Pick<Store, 'getBuild' | 'buildTagged' | 'newestCompleteBuild'>;

export interface BuildRunner {
  /** Containers of a dead emulator of this data directory removed at start. */
  swept: number;
  /** Undefined on the host network. */
  containerListener?: ContainerListener;
  /** What runs a lobby of `game`: its build (read from these stores), in a container. */
  resolver(store: BuildLookup, blobs: Pick<BlobStore, 'readBuild'>, owner: ServerOwner): (game: Game, lobby: unknown, version: Pick<LobbyVersion, 'buildId'>) => Promise<HowToRun>;
  /** The images of the builds it runs: removed with their builds (sweepImages), or when a build is deleted here. */
  images: BuildImages;
  /** Removes the images of builds the store no longer has, or that no lobby used for a while; answers how many went. */
  sweepImages(store: Pick<Store, 'getBuild'>): Promise<number>;
  close(): Promise<void>;
}

/**
 * The build a lobby of `gameId` runs, or a RunnerError saying why there is none (and what to push): the tag given,
 * else the build its version names (`versionBuild`, read alone: a game may have many), else the newest complete one.
 */
export async function pickBuild(store: BuildLookup, gameId: string, tag: string | true, versionBuild: string | null = null): Promise<BuildRow> {
  if (tag === true) {
    if (versionBuild === null) {
      const newest = await store.newestCompleteBuild(gameId);
      if (newest !== undefined) return newest;
      throw new RunnerError(`game ${gameId} has no complete build to run: push one with \`gamehost build push <file> --tag <name:tag>\``);
    }
    const named = await store.getBuild(versionBuild);
    if (named?.game_id === gameId && named.complete === 1) return named;
    throw new RunnerError(`the build ${versionBuild} that game ${gameId}'s version names is gone: deploy a version with a build the game has`);
  }
  const tagged = await store.buildTagged(gameId, tag);
  if (tagged?.complete === 1) return tagged;
  throw new RunnerError(
    tagged !== undefined
      ? `the build tagged ${tag} of game ${gameId} is not complete yet: finish its push (\`gamehost build push\` resumes it)`
      : `game ${gameId} has no build tagged ${tag}: push one with \`gamehost build push <file> --tag ${tag}\``,
  );
}

/** Connects to Docker (a RunnerError in one line when none answers) and sweeps what a dead emulator left. */
export async function startBuildRunner(opts: BuildRunnerOptions): Promise<BuildRunner> {
  const daemon = await connectDocker(opts.env);
  let swept: number;
  try {
    swept = await sweepContainers(daemon, opts.dataDir);
  } catch (err) {
    await daemon.close().catch(() => {});
    throw new RunnerError(`Docker could not list this emulator's containers: ${(err as Error).message}`);
  }
  let network: ContainerNetwork = { mode: 'host' };
  let containerListener: ContainerListener | undefined;
  if (opts.network !== 'host') {
    try {
      const bridge = await emulatorNetwork(daemon, opts.dataDir);
      // Docker Desktop's networks live in its VM: the host is host.docker.internal there, relayed to its loopback.
      const desktop = isDockerDesktop(process.platform, await daemon.info());
      containerListener = desktop ? { bindTo: '127.0.0.1', callAt: 'host.docker.internal' } : { bindTo: bridge.gateway, callAt: bridge.gateway, subnet: bridge.subnet };
      const publishOn = opts.host === 'localhost' ? '127.0.0.1' : opts.host.replace(/^\[|\]$/g, '');
      network = { mode: 'bridge', name: bridge.name, publishOn, emulatorHost: containerListener.callAt };
    } catch (err) {
      await daemon.close().catch(() => {});
      throw new RunnerError(`Docker could not make the containers' network: ${(err as Error).message}`);
    }
  }
  const images = new BuildImages(daemon, { dataDir: opts.dataDir, maxBytes: opts.maxImageBytes, warn: opts.warn });
  return {
    swept,
    containerListener,
    images,
    sweepImages: async (store) => {
      const removed = await images.sweep(async (gameId, ids) => {
        const have = new Set<string>();
        for (const id of ids) if ((await store.getBuild(id))?.game_id === gameId) have.add(id);
        return have;
      });
      await images.flush();
      return removed;
    },
    close: async () => {
      await images.flush();
      // Kept when a container still holds it (a lobby that would not stop): removed by the next close or reset.
      if (network.mode === 'bridge') await daemon.removeNetwork(network.name).catch(() => {});
      await daemon.close();
    },
    resolver: (store, blobs, owner) => async (game, _lobby, version) => {
      const build = await pickBuild(store, game.gameId, opts.tag, version.buildId);
      return {
        build: { id: build.build_id, gameId: game.gameId, kind: build.kind, compression: build.compression, open: () => blobs.readBuild(build) },
        images,
        docker: daemon,
        owner: { dataDir: opts.dataDir, replica: owner.replica, pidStart: owner.start },
        network,
      };
    },
  };
}
