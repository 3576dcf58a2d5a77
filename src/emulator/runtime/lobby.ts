// The seam between the matchmaker and what runs a lobby's server: one call starts it (a command, or a pushed build
// in a container), its output goes to the lobby's log lines in the Store, and its resource samples are kept for
// the lobby's metrics. The lobby's lifecycle (ready, stop, exit -> stopped) stays with the lobbies service.
import { mkdir, readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { LogStream } from '../stores/store.js';
import { DockerRunner, LABELS, loadBuild, type BuildSource, type ContainerOwner, type DockerDaemon } from './docker.js';
import { hostEnvironment, ProcessRunner } from './process.js';
import { RunnerError, type ExitInfo, type OutputStream, type ResourceSample, type RunPort, type RunningServer } from './runtime.js';

/** How a lobby's server runs: a command through the shell, or a pushed build in a container. */
export type HowToRun =
  | { command: string }
  | { build: BuildSource; docker: DockerDaemon; owner: ContainerOwner; network?: 'host' | 'published'; publishOn?: string };

/** Where the output lines go: the logs service's append (services/logs.ts). */
export interface LogSink {
  append(lobbyId: string, stream: LogStream, lines: Buffer[]): Promise<void>;
}

export interface LobbyRunOptions {
  lobbyId: string;
  /**
   * The lobby's environment (as `emulator lobby env` prints it, and what `--pass-env` adds). A command also gets the
   * allow-listed part of this process's beneath it (hostEnvironment), nothing else of it.
   */
  env: Record<string, string>;
  ports: RunPort[];
  run: HowToRun;
  /** Lobbies' working directories go under this (one per lobby, made here): e.g. <data dir>/lobbies. */
  workRoot: string;
  logs: LogSink;
  /** Default 5 s and 30: the service's metrics are one sample per 5 s, the last 30. */
  sampleEveryMs?: number;
  keepSamples?: number;
  /** Called with the kept samples (oldest first) each time one is taken: e.g. to keep them in the store. */
  onSamples?(samples: TimedSample[]): void;
}

export interface TimedSample extends ResourceSample {
  /** Milliseconds since the epoch. */
  ts: number;
}

export interface LobbyRun {
  lobbyId: string;
  server: RunningServer;
  /** Once the server ended and every line it printed is in the Store. */
  exited: Promise<ExitInfo>;
  /** The kept samples, oldest first. */
  samples(): TimedSample[];
  stop(graceMs: number): Promise<ExitInfo>;
}

const STREAMS: Record<OutputStream, LogStream> = { stdout: 'std_out', stderr: 'std_err' };
// Lines are written in batches: at most this often, or at this many.
const FLUSH_MS = 100;
const FLUSH_LINES = 256;
// A server's first resource sample, this long after it starts (then one every sampleEveryMs).
const FIRST_SAMPLE_MS = 1_000;
// Lines waiting for a slow or failing store, per stream, at most; past it the oldest go (the store keeps 10,000).
const PENDING_MAX = 10_000;

/** Lines of one lobby to the Store in order, a batch at a time, never more than one write in flight per stream. */
class LogBatcher {
  private readonly pending: Record<LogStream, Buffer[]> = { std_out: [], std_err: [] };
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly lobbyId: string,
    private readonly sink: LogSink,
  ) {}

  add(stream: LogStream, line: Buffer): void {
    const queue = this.pending[stream];
    queue.push(line);
    if (queue.length > PENDING_MAX) queue.splice(0, queue.length - PENDING_MAX);
    if (queue.length >= FLUSH_LINES) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  /** Writes what is pending; resolves once it (and every write before it) is done. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.writing = this.writing.then(async () => {
      for (const stream of ['std_out', 'std_err'] as const) {
        const lines = this.pending[stream].splice(0);
        if (lines.length === 0) continue;
        try {
          await this.sink.append(this.lobbyId, stream, lines);
        } catch {
          // The store did not take them: back in front, for the next flush (PENDING_MAX bounds them).
          this.pending[stream].unshift(...lines);
        }
      }
    });
    return this.writing;
  }
}

// Loads in progress, by daemon and image: lobbies made together wait for the one load.
const loading = new Map<string, Promise<string>>();

/** The name a build's image is kept under in Docker: its own, whatever the tar called it (two pushes of game:latest differ). */
export function buildImage(buildId: string): string {
  return `gamehost-build:${buildId.replace(/[^\w.-]/g, '-').replace(/^[.-]/, '_').slice(0, 128)}`;
}

/**
 * The image of a build: kept in the daemon under buildImage(id) once loaded, so a later serve (a restart) does not
 * load it again; an image removed since (docker image prune, a person) is loaded again; a failed load is tried
 * again next time.
 */
async function imageOf(docker: DockerDaemon, build: BuildSource): Promise<string> {
  const image = buildImage(build.id);
  if (await docker.hasImage(image).catch(() => false)) return image;
  const key = `${docker.where}\n${image}`;
  let load = loading.get(key);
  if (load === undefined) {
    load = (async () => {
      const loaded = await loadBuild(docker, build);
      const [repo, tag] = image.split(':') as [string, string];
      try {
        await docker.tagImage(loaded, repo, tag);
      } catch (err) {
        throw new RunnerError(`Docker could not name the build's image ${image}: ${(err as Error).message}`);
      }
      return image;
    })().finally(() => loading.delete(key));
    loading.set(key, load);
  }
  return load;
}

/**
 * Starts a lobby's server: a command in a working directory of the lobby's own, or a build in a container labelled
 * with the lobby. Its output lines go to `logs`; samples are taken every sampleEveryMs while it runs.
 */
export async function startLobbyServer(opts: LobbyRunOptions): Promise<LobbyRun> {
  const { lobbyId, run } = opts;
  const workDir = join(opts.workRoot, lobbyId);
  await mkdir(workDir, { recursive: true, mode: 0o700 });
  const batcher = new LogBatcher(lobbyId, opts.logs);
  const spec = {
    env: 'command' in run ? { ...hostEnvironment(process.env), ...opts.env } : opts.env,
    workDir,
    ports: opts.ports,
    labels: { [LABELS.lobby]: lobbyId },
    onLine: (stream: OutputStream, line: Buffer) => batcher.add(STREAMS[stream], line),
  };
  let server: RunningServer;
  try {
    server =
      'command' in run
        ? await new ProcessRunner(run.command).start(spec)
        : await new DockerRunner(run.docker, { image: await imageOf(run.docker, run.build), owner: run.owner, network: run.network, publishOn: run.publishOn }).start(spec);
  } catch (err) {
    await removeIfEmpty(workDir);
    throw err;
  }

  const kept: TimedSample[] = [];
  const keep = opts.keepSamples ?? 30;
  const takeSample = () => {
    void server.sample().then((s) => {
      if (s === undefined) return;
      kept.push({ ts: Date.now(), ...s });
      if (kept.length > keep) kept.splice(0, kept.length - keep);
      opts.onSamples?.([...kept]);
    }, () => {});
  };
  // A first one soon after it starts, so a lobby has metrics of its own early, not only after the first interval;
  // not at once: finding the tree runs `ps` (pidtree), which would take CPU from the server as it starts.
  const first = setTimeout(takeSample, Math.min(FIRST_SAMPLE_MS, opts.sampleEveryMs ?? 5_000));
  first.unref();
  const sampler = setInterval(takeSample, opts.sampleEveryMs ?? 5_000);
  sampler.unref();
  const exited = server.exited.then(async (exit) => {
    clearTimeout(first);
    clearInterval(sampler);
    await batcher.flush();
    await removeIfEmpty(workDir);
    return exit;
  });
  return {
    lobbyId,
    server,
    exited,
    samples: () => [...kept],
    stop: async (graceMs) => {
      await server.stop(graceMs);
      return exited;
    },
  };
}

/** A lobby's working directory goes once its server is done, when it left nothing there (what it wrote stays). */
async function removeIfEmpty(dir: string): Promise<boolean> {
  return rmdir(dir).then(
    () => true,
    () => false,
  );
}

/**
 * Removes the empty working directories under `workRoot` of lobbies that are not running (`running` answers from
 * the store): those whose emulator died before their server's exit removed them. Answers how many went.
 */
export async function removeEmptyWorkDirs(workRoot: string, running: (lobbyId: string) => Promise<boolean>): Promise<number> {
  let names: string[];
  try {
    names = await readdir(workRoot);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) if (!(await running(name)) && (await removeIfEmpty(join(workRoot, name)))) removed++;
  return removed;
}
