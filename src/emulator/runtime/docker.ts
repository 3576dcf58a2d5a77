// A lobby's server as a container of a pushed docker_image build, through the Docker Engine API (engine-api.ts): a
// staging host with only a mounted socket has no docker CLI. The daemon is found as the docker CLI finds it
// (DOCKER_HOST, else the default socket). Every container is labelled with the emulator that made it, so a sweep
// at start removes what an emulator that died left behind (testcontainers' reaper does the same).
import { hostname } from 'node:os';
import { constants as osConstants } from 'node:os';
import { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { DockerEngine, engineAddress, FrameDemuxer, type ContainerStats, type DaemonInfo } from './engine-api.js';
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
export async function connectDocker(env: Record<string, string | undefined> = process.env): Promise<DockerDaemon> {
  let daemon: DockerEngine;
  try {
    daemon = new DockerEngine(engineAddress(env));
  } catch (err) {
    const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? `Docker's TLS certificates (DOCKER_CERT_PATH) cannot be read: ${(err as Error).message}` : (err as Error).message;
    throw new RunnerError(reason);
  }
  try {
    await daemon.connect();
  } catch (err) {
    await daemon.close().catch(() => {});
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

export interface DockerRunnerOptions {
  image: string;
  owner: ContainerOwner;
  /**
   * host: the container shares this host's network (Linux: every packet stays on the machine, the server's ports
   * are this host's); published: each port published on 127.0.0.1 (Docker Desktop), this host then being
   * host.docker.internal inside. Default: networkFor this platform (the daemon unasked).
   */
  network?: 'host' | 'published';
  /** Where published ports are bound (the emulator's `--host`); default 127.0.0.1. */
  publishOn?: string;
}

/**
 * How a container reaches this host: its network (Linux's Docker Engine: every packet stays on this machine, the
 * server's ports are this host's), else ports published on --host and the host as host.docker.internal. Docker
 * Desktop runs its engine in a VM, on Linux too, whose host network is the VM's: published there.
 */
export function networkFor(platform: NodeJS.Platform, info: DaemonInfo): 'host' | 'published' {
  return platform === 'linux' && !/docker desktop/i.test(info.OperatingSystem ?? '') ? 'host' : 'published';
}

/** The URL the emulator is reached at from inside a container: loopback becomes host.docker.internal where published. */
export function urlFromContainer(url: string, network: 'host' | 'published'): string {
  if (network === 'host') return url;
  const u = new URL(url);
  if (['127.0.0.1', 'localhost', '[::1]', '0.0.0.0'].includes(u.hostname)) u.hostname = 'host.docker.internal';
  return u.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
}

export class DockerRunner implements Runner {
  readonly network: 'host' | 'published';

  constructor(
    private readonly daemon: DockerDaemon,
    private readonly opts: DockerRunnerOptions,
  ) {
    this.network = opts.network ?? networkFor(process.platform, {});
  }

  async start(spec: StartSpec): Promise<RunningServer> {
    const docker = this.daemon;
    const { owner } = this.opts;
    const published = this.network === 'published';
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
        ExposedPorts: published ? Object.fromEntries(spec.ports.map((p) => [portKey(p), {}])) : undefined,
        HostConfig: {
          // An init as PID 1: SIGTERM reaches the server (PID 1 ignores signals it has no handler for) and zombies are reaped.
          Init: true,
          NetworkMode: published ? undefined : 'host',
          PortBindings: published ? Object.fromEntries(spec.ports.map((p) => [portKey(p), [{ HostIp: this.opts.publishOn ?? '127.0.0.1', HostPort: String(p.port) }]])) : undefined,
          ExtraHosts: published ? ['host.docker.internal:host-gateway'] : undefined,
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

class RunningContainer implements RunningServer {
  readonly description: string;
  readonly exited: Promise<ExitInfo>;
  private ended = false;
  private stopping: Promise<ExitInfo> | undefined;

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
      let status: number;
      try {
        // Asked before the start: a created container counts as not running, so the default condition answers at once.
        status = await docker.waitContainer(container);
      } catch {
        // Removed from under us (a sweep, a person): it ended, with no status to tell.
        status = 137;
      }
      this.ended = true;
      // The output stream ends with the container; a moment's wait bounds a stream that does not say so.
      // Unref'd, as the grace below: a timer that lost its race must not hold a closing serve open.
      await Promise.race([drained, sleep(1_000, undefined, { ref: false })]);
      out.end();
      err.end();
      output.destroy();
      // Nothing of it stays behind, whichever way it ended.
      await docker.removeContainer(container).catch(() => {});
      return exitOf(status);
    })();
  }

  stop(graceMs: number): Promise<ExitInfo> {
    this.stopping ??= (async () => {
      if (!this.ended) {
        await this.docker.killContainer(this.container, 'SIGTERM').catch(() => {});
        const done = await Promise.race([this.exited.then(() => true), sleep(graceMs, false, { ref: false })]);
        if (!done) await this.docker.killContainer(this.container, 'SIGKILL').catch(() => {});
      }
      return this.exited;
    })();
    return this.stopping;
  }

  async sample(): Promise<ResourceSample | undefined> {
    if (this.ended) return undefined;
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
