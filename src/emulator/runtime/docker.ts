// A lobby's server as a container of a pushed docker_image build, through the Docker Engine API (engine-api.ts): a
// staging host with only a mounted socket has no docker CLI. The daemon is found as the docker CLI finds it
// (DOCKER_HOST, else the default socket). Every container is labelled with the emulator that made it, so a sweep
// at start removes what an emulator that died left behind (testcontainers' reaper does the same).
// A container runs isolated unless its emulator is told otherwise (--container-network host): on a bridge network of
// its emulator's own, where it reaches no other container and not this host's loopback, its ports published on
// the host; with no capability but binding low ports, no new privileges, a read-only root (a tmpfs /tmp), and the
// memory, CPU weight and process count of its lobby's tier.
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import { constants as osConstants } from 'node:os';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { DockerEngine, EngineError, engineAddress, FrameDemuxer, type ContainerConfig, type ContainerStats, type DaemonInfo, type EngineOptions } from './engine-api.js';
import { LOBBY_PIDS_LIMIT, LOBBY_TIER } from '../services/environment.js';
import { isRunning, isSameProcess } from './process.js';
import { LineSplitter, RunnerError, type ExitInfo, type ResourceSample, type Runner, type RunningServer, type StartSpec } from './runtime.js';

/** The labels every container of the emulator carries. */
export const LABELS = {
  dataDir: 'gamehost.data-dir',
  replica: 'gamehost.replica',
  host: 'gamehost.host',
  pid: 'gamehost.pid',
  /** The emulator's process start time (processStart): a pid given to another process since is not taken for it. */
  pidStart: 'gamehost.pid-start',
  lobby: 'gamehost.lobby',
} as const;

/** A daemon to talk to (`where` it is, for messages). */
export type DockerDaemon = DockerEngine;

/** The daemon, once it answers; a RunnerError in one line when none does, or DOCKER_HOST is not understood. */
export async function connectDocker(env: Record<string, string | undefined> = process.env, opts: EngineOptions = {}): Promise<DockerDaemon> {
  let daemon: DockerEngine;
  try {
    daemon = new DockerEngine(engineAddress(env), opts);
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `Docker's TLS certificates (DOCKER_CERT_PATH) cannot be read: ${(err as Error).message}` : (err as Error).message;
    throw new RunnerError(reason);
  }
  try {
    await daemon.connect();
  } catch (err) {
    await daemon.close().catch(() => {});
    // A daemon too old for what the runner asks of it: said as it is.
    if (err instanceof EngineError && err.status === 0) throw new RunnerError(err.message);
    const reason = (err as NodeJS.ErrnoException).code ?? (err as Error).message;
    throw new RunnerError(`no Docker daemon answers at ${daemon.where} (${reason}): start one, or set DOCKER_HOST`);
  }
  return daemon;
}

/** Who is running the containers: the labels that let a sweep tell whether the emulator that made one still runs. */
export interface ContainerOwner {
  dataDir: string;
  /** Which replica (when several share one database): its id, as the store records it as the lobbies' owner. */
  replica: string;
  /** The emulator's process start time (processStart), beside its pid. */
  pidStart: number;
}

/**
 * How a lobby's container reaches the network. `bridge` (the default): the emulator's own bridge network (one per
 * emulator, see emulatorNetwork), each port published on `publishOn`, this host's emulator reached at `emulatorHost`
 * (the network's gateway on Linux; host.docker.internal on Docker Desktop), where a listener serves the lobby
 * routes only. `host`: this host's network, loopback and all (an explicit choice, for one's own machine).
 */
export type ContainerNetwork = { mode: 'host' } | { mode: 'bridge'; name: string; publishOn: string; emulatorHost: string };

export interface DockerRunnerOptions {
  image: string;
  owner: ContainerOwner;
  network: ContainerNetwork;
}

/** Processes and threads a lobby's container may hold at once (as a process's cgroup: LOBBY_PIDS_LIMIT). */
export const PIDS_LIMIT = LOBBY_PIDS_LIMIT;
/** The writable /tmp of a read-only root (counted in the container's memory). */
const TMPFS = 'rw,nosuid,nodev,size=256m';

/**
 * What the lobby's container is held to: what its environment tells it it has, as production's job does
 * (RIVET_MEMORY the reservation, RIVET_MEMORY_OVERSUBSCRIBE the hard limit, RIVET_CPU/10 CPU shares, 1 to 10,000);
 * the default tier where it says nothing.
 */
export function containerLimits(env: Record<string, string>): Pick<NonNullable<ContainerConfig['HostConfig']>, 'Memory' | 'MemorySwap' | 'MemoryReservation' | 'CpuShares' | 'PidsLimit'> {
  const num = (name: string, fallback: number) => {
    const n = Number(env[name]);
    return Number.isSafeInteger(n) && n > 0 ? n : fallback;
  };
  const reservation = num('RIVET_MEMORY', LOBBY_TIER.memory);
  const max = Math.max(num('RIVET_MEMORY_OVERSUBSCRIBE', LOBBY_TIER.memoryMax), reservation);
  const cpu = num('RIVET_CPU', LOBBY_TIER.cpu);
  return { Memory: max, MemorySwap: max, MemoryReservation: reservation, CpuShares: Math.min(10_000, Math.max(1, Math.floor(cpu / 10))), PidsLimit: PIDS_LIMIT };
}

/** Whether the daemon runs in Docker Desktop's VM (macOS, Windows, and Linux too), where its networks' gateways are not this host's addresses. */
export function isDockerDesktop(platform: NodeJS.Platform, info: DaemonInfo): boolean {
  return platform !== 'linux' || /docker desktop/i.test(info.OperatingSystem ?? '');
}

const ICC = 'com.docker.network.bridge.enable_icc';

/** The name of the bridge network of the emulator of a data directory on this host. */
export function networkName(dataDir: string): string {
  return `gamehost-${createHash('sha256').update(`${hostname()}\n${dataDir}`).digest('hex').slice(0, 16)}`;
}

/** The emulator's bridge network: its name, its subnet (CIDR) and its gateway (this host's address on it). */
export interface BridgeNetwork {
  name: string;
  subnet: string;
  gateway: string;
}

/**
 * The bridge network of the emulator of `dataDir`, made once (kept by name across restarts): one per emulator, not
 * per game, as Docker's default address pools hold about 30 bridge networks and a staging host runs hundreds of
 * games; with inter-container traffic off, so no container reaches another on it, of its game or any other.
 */
export async function emulatorNetwork(daemon: DockerDaemon, dataDir: string): Promise<BridgeNetwork> {
  const name = networkName(dataDir);
  let network = await daemon.inspectNetwork(name);
  if (network === undefined) {
    await daemon
      .createNetwork({ Name: name, Labels: { [LABELS.dataDir]: dataDir, [LABELS.host]: hostname() }, Options: { [ICC]: 'false' } })
      .catch((err: unknown) => {
        // Made meanwhile by a sibling on this data directory: the same network.
        if (!(err instanceof EngineError && err.status === 409)) throw err;
      });
    network = await daemon.inspectNetwork(name);
  }
  const config = network?.IPAM?.Config?.find((c) => c.Subnet !== undefined && c.Gateway !== undefined && !c.Subnet.includes(':'));
  if (network === undefined || config === undefined) throw new RunnerError(`Docker made the network ${name} without an IPv4 subnet and gateway`);
  if (network.Options?.[ICC] !== 'false')
    throw new RunnerError(`the Docker network ${name} lets its containers reach each other (not made by gamehost): remove it (docker network rm ${name}) and start again`);
  return { name, subnet: config.Subnet!, gateway: config.Gateway! };
}

export class DockerRunner implements Runner {
  constructor(
    private readonly daemon: DockerDaemon,
    private readonly opts: DockerRunnerOptions,
  ) {}

  async start(spec: StartSpec): Promise<RunningServer> {
    const docker = this.daemon;
    const { owner, network } = this.opts;
    const bridge = network.mode === 'bridge' ? network : undefined;
    const portKey = (p: StartSpec['ports'][number]) => `${p.port}/${p.protocol === 'udp' ? 'udp' : 'tcp'}`;
    let container: string;
    try {
      container = await docker.createContainer({
        Image: this.opts.image,
        Env: Object.entries(spec.env).map(([k, v]) => `${k}=${v}`),
        Labels: {
          ...spec.labels,
          [LABELS.dataDir]: owner.dataDir,
          [LABELS.replica]: owner.replica,
          [LABELS.host]: hostname(),
          [LABELS.pid]: String(process.pid),
          [LABELS.pidStart]: String(owner.pidStart),
        },
        ExposedPorts: bridge ? Object.fromEntries(spec.ports.map((p) => [portKey(p), {}])) : undefined,
        HostConfig: {
          // An init as PID 1: SIGTERM reaches the server (PID 1 ignores signals it has no handler for) and zombies are reaped.
          Init: true,
          NetworkMode: bridge ? bridge.name : 'host',
          PortBindings: bridge ? Object.fromEntries(spec.ports.map((p) => [portKey(p), [{ HostIp: bridge.publishOn, HostPort: String(p.port) }]])) : undefined,
          // host.docker.internal: where this host's emulator answers the lobby routes (as Docker Desktop names the host).
          ExtraHosts: bridge ? [`host.docker.internal:${bridge.emulatorHost === 'host.docker.internal' ? 'host-gateway' : bridge.emulatorHost}`] : undefined,
          // No raw sockets (NET_RAW), mounts, ptrace or chown: only a port under 1024, for a server that wants one.
          CapDrop: ['ALL'],
          CapAdd: ['NET_BIND_SERVICE'],
          SecurityOpt: ['no-new-privileges'],
          ReadonlyRootfs: true,
          Tmpfs: { '/tmp': TMPFS },
          ...containerLimits(spec.env),
        },
      });
    } catch (err) {
      throw new RunnerError(`Docker could not create a container of ${this.opts.image}: ${(err as Error).message}`);
    }
    try {
      // Attached before it starts, so no early line is missed.
      const output = await docker.attachContainer(container);
      const running = new RunningContainer(docker, container, output, spec);
      await docker.startContainer(container);
      return running;
    } catch (err) {
      await docker.removeContainer(container).catch(() => {});
      throw new RunnerError(`Docker could not start a container of ${this.opts.image}: ${(err as Error).message}`);
    }
  }
}

/** A container's exit status as a process's: 128 + n is signal n (as Docker reports a kill), anything else a code. */
function exitOf(status: number): ExitInfo {
  if (status > 128 && status < 128 + 65) {
    const name = Object.entries(osConstants.signals).find(([, n]) => n === status - 128)?.[0];
    if (name) return { code: null, signal: name };
  }
  return { code: status, signal: null };
}

/** How long the runner keeps asking a daemon that does not answer about a container whose wait dropped. */
const LOST_AFTER_MS = 60_000;

/**
 * The container's exit status, however long it runs: a wait whose connection drops (a proxy's idle timeout, a
 * daemon restarting) is not an exit. The container is inspected: still running, it is waited for again; exited, its
 * code; gone (removed from under us, by a sweep or a person), 137 as for a kill. A daemon that answers nothing for
 * LOST_AFTER_MS counts the container lost (137).
 */
async function exitStatus(docker: DockerEngine, container: string): Promise<number> {
  // Asked before the start: a created container counts as not running, so the default condition would answer at once.
  let condition: 'next-exit' | 'not-running' = 'next-exit';
  let silentSince: number | undefined;
  for (;;) {
    const asked = Date.now();
    try {
      return await docker.waitContainer(container, condition);
    } catch (err) {
      if (err instanceof EngineError && err.status === 404) return 137;
    }
    // A wait dropped at once (a proxy refusing it): not asked again in a tight loop.
    if (Date.now() - asked < 1_000) await sleep(1_000, undefined, { ref: false });
    try {
      const state = (await docker.inspectContainer(container)).State;
      silentSince = undefined;
      // Started by now (the start call answered before any wait could drop): not-running answers for one that ended meanwhile.
      condition = 'not-running';
      if (!state.Running && state.Status !== 'created') return state.ExitCode;
    } catch (err) {
      if (err instanceof EngineError && err.status === 404) return 137;
      silentSince ??= Date.now();
      if (Date.now() - silentSince >= LOST_AFTER_MS) return 137;
    }
  }
}

class RunningContainer implements RunningServer {
  readonly description: string;
  readonly exited: Promise<ExitInfo>;
  private ended = false;
  private stopping: Promise<ExitInfo> | undefined;
  // One stats call at a time: the daemon takes a second or more for each, longer when loaded.
  private sampling: Promise<ResourceSample | undefined> | undefined;

  constructor(
    private readonly docker: DockerEngine,
    private readonly container: string,
    output: Readable,
    spec: StartSpec,
  ) {
    this.description = `container ${container.slice(0, 12)}`;
    const out = new LineSplitter((line) => spec.onLine('stdout', line));
    const err = new LineSplitter((line) => spec.onLine('stderr', line));
    const frames = new FrameDemuxer((stream, payload) => (stream === 'stdout' ? out : err).push(payload));
    output.on('data', (chunk: Buffer) => frames.push(chunk));
    const drained = new Promise<void>((resolve) => {
      output.once('end', resolve);
      output.once('close', resolve);
      output.once('error', () => resolve());
    });
    this.exited = (async () => {
      const status = await exitStatus(docker, container);
      this.ended = true;
      // The output stream ends with the container; a moment's wait bounds a stream that does not say so.
      // Unref'd: a timer that lost its race must not hold a closing serve open.
      await Promise.race([drained, sleep(1_000, undefined, { ref: false })]);
      out.end();
      err.end();
      output.destroy();
      // Nothing of it stays behind, whichever way it ended.
      await docker.removeContainer(container).catch(() => {});
      return exitOf(status);
    })();
  }

  /**
   * The daemon's own stop (its stop signal, SIGKILL after the grace period, in whole seconds); a daemon that does not
   * answer the stop gets a SIGKILL.
   */
  stop(graceMs: number): Promise<ExitInfo> {
    this.stopping ??= (async () => {
      if (!this.ended) {
        await this.docker.stopContainer(this.container, Math.ceil(graceMs / 1000)).catch(async (err: unknown) => {
          if (err instanceof EngineError && (err.status === 304 || err.status === 404)) return;
          await this.docker.killContainer(this.container, 'SIGKILL').catch(() => {});
        });
      }
      return this.exited;
    })();
    return this.stopping;
  }

  sample(): Promise<ResourceSample | undefined> {
    if (this.ended) return Promise.resolve(undefined);
    this.sampling ??= this.takeSample().finally(() => (this.sampling = undefined));
    return this.sampling;
  }

  private async takeSample(): Promise<ResourceSample | undefined> {
    let s: ContainerStats;
    try {
      s = await this.docker.statsOf(this.container);
    } catch {
      return undefined;
    }
    if (this.ended) return undefined;
    const cpuDelta = s.cpu_stats.cpu_usage.total_usage - (s.precpu_stats.cpu_usage?.total_usage ?? 0);
    const systemDelta = (s.cpu_stats.system_cpu_usage ?? 0) - (s.precpu_stats.system_cpu_usage ?? 0);
    const cpus = s.cpu_stats.online_cpus ?? s.cpu_stats.cpu_usage.percpu_usage?.length ?? 1;
    const cpu = cpuDelta > 0 && systemDelta > 0 ? (cpuDelta / systemDelta) * cpus * 100 : 0;
    // As `docker stats` shows it: usage less the page cache the kernel can drop.
    const stats = s.memory_stats.stats ?? {};
    const cache = stats.inactive_file ?? stats.total_inactive_file ?? 0;
    return { cpu, memory: Math.max(0, (s.memory_stats.usage ?? 0) - cache) };
  }
}

/**
 * Removes the containers of this data directory that an emulator on this host left when it died (its pid no longer
 * runs, or is another process's now: its start time differs); those of a live emulator, and of other hosts, are
 * left alone. Answers how many went.
 */
export async function sweepContainers(daemon: DockerDaemon, dataDir: string): Promise<number> {
  const found = await daemon.listContainers([`${LABELS.dataDir}=${dataDir}`]);
  const here = hostname();
  let removed = 0;
  for (const c of found) {
    const pid = Number(c.Labels[LABELS.pid]);
    if (c.Labels[LABELS.host] !== here || !Number.isSafeInteger(pid) || pid === process.pid) continue;
    const start = Number(c.Labels[LABELS.pidStart]);
    if (isRunning(pid) && (!Number.isSafeInteger(start) || (await isSameProcess(pid, start)))) continue;
    await daemon
      .removeContainer(c.Id)
      .then(() => removed++)
      .catch(() => {});
  }
  return removed;
}

/**
 * Removes every container an emulator of this data directory made on this host, and its network (`emulator
 * reset`, once no serve holds the directory). Answers how many containers went.
 */
export async function removeEmulatorContainers(daemon: DockerDaemon, dataDir: string): Promise<number> {
  const here = hostname();
  let removed = 0;
  for (const c of await daemon.listContainers([`${LABELS.dataDir}=${dataDir}`])) {
    if (c.Labels[LABELS.host] !== here) continue;
    await daemon.removeContainer(c.Id).then(() => removed++);
  }
  await daemon.removeNetwork(networkName(dataDir)).catch((err: unknown) => {
    if (!(err instanceof EngineError && err.status === 404)) throw err;
  });
  return removed;
}

/**
 * `emulator reset`'s part: the containers and network an emulator of `dataDir` left on this host, and the images it
 * loaded for its builds (by its record, which goes with the data), removed where a daemon answers (found as
 * --run-build finds it); undefined where none does, as there is nothing of Docker's then.
 */
export async function resetContainers(dataDir: string, env: Record<string, string | undefined>): Promise<{ containers: number; images: number } | undefined> {
  let daemon: DockerDaemon;
  try {
    daemon = await connectDocker(env, { timeoutMs: 5_000 });
  } catch {
    return undefined;
  }
  try {
    const containers = await removeEmulatorContainers(daemon, dataDir);
    const { BuildImages } = await import('./images.js');
    const images = await new BuildImages(daemon, { dataDir }).removeAll();
    return { containers, images };
  } finally {
    await daemon.close().catch(() => {});
  }
}
