// The seam between the matchmaker and what runs a lobby's server: one call starts it (a command, or a pushed build
// in a container), its output goes to the lobby's log lines in the Store, and its resource samples are kept for
// the lobby's metrics. The lobby's lifecycle (ready, stop, exit -> stopped) stays with the lobbies service.
import { mkdir, readdir, rmdir } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { EmulatorError } from '../errors.js';
import { LOG_BOUNDS, LOG_STREAMS, type LogBounds, type LogStream } from '../stores/store.js';
import { DockerRunner, LABELS, type ContainerNetwork, type ContainerOwner, type DockerDaemon } from './docker.js';
import type { BuildImages, BuildSource } from './images.js';
import type { LobbyCgroup } from './cgroup.js';
import { hostEnvironment, ProcessRunner } from './process.js';
import type { ExitInfo, OutputStream, ResourceSample, RunPort, RunningServer } from './runtime.js';

/** A container of an image, by its ID, on a daemon. */
export interface ContainerRun {
  /** The image's ID (sha256:…): never a name, which a pushed build could have chosen. */
  image: string;
  docker: DockerDaemon;
  owner: ContainerOwner;
  network: ContainerNetwork;
}

/** How a lobby's server runs: a command through the shell, or a pushed build in a container (its image loaded first). */
export type HowToRun = { command: string } | (Omit<ContainerRun, 'image'> & { build: BuildSource; images: BuildImages });

/**
 * Where the output lines go: the logs service's append (services/logs.ts), stamped at `at` (ms) or now; with
 * `firstTs`, a batch the store already took is not written twice (Store.appendLobbyLogs).
 */
export interface LogSink {
  append(lobbyId: string, stream: LogStream, lines: Buffer[], at?: number, firstTs?: number): Promise<void>;
}

/** How long the gate waits before it tries a store that did not answer again: doubling from base up to cap. */
export interface Backoff {
  baseMs: number;
  capMs: number;
}

export const STORE_BACKOFF: Backoff = Object.freeze({ baseMs: 250, capMs: 4_000 });

/** Whether a write failed because the store did not answer (STORE_UNAVAILABLE), which is worth trying again. */
export function storeDidNotAnswer(err: unknown): boolean {
  return err instanceof EmulatorError && err.code === 'STORE_UNAVAILABLE';
}

/**
 * The one way the records of running servers (their lines, exits and pids) reach a store that may stop answering:
 * a write the store did not take is held and tried again, never dropped; while the store does not answer, one held
 * write at a time tries it, after a capped exponential backoff, and the others wait for that one: no retry storm,
 * however many lobbies and batches wait. Each writer keeps its own order (one write in flight per lobby's stream).
 */
export class WriteGate {
  private delayMs = 0;
  private nextTryAt = 0;
  private probing: Promise<void> | undefined;
  private abandoned = false;
  private readonly abort = new AbortController();

  constructor(
    private readonly backoff: Backoff = STORE_BACKOFF,
    /** Told when the store stops answering (with why) and when it answers again. */
    private readonly onChange?: (down: boolean, why?: string) => void,
  ) {}

  /** True while the store does not answer (a write failed, and none succeeded since). */
  get down(): boolean {
    return this.delayMs > 0;
  }

  /**
   * Runs `write` until it succeeds; rejects at once on a failure other than the store's not answering, and with the
   * store's error once abandon() was called (the emulator closes).
   */
  async run<T>(write: () => Promise<T>): Promise<T> {
    for (;;) {
      if (this.delayMs === 0 || this.abandoned) {
        try {
          return await write();
        } catch (err) {
          if (!storeDidNotAnswer(err) || this.abandoned) throw err;
          this.failed(err);
          continue;
        }
      }
      if (this.probing !== undefined) {
        await this.probing;
        continue;
      }
      let done!: () => void;
      this.probing = new Promise((resolve) => (done = resolve));
      try {
        await sleep(Math.max(0, this.nextTryAt - Date.now()), undefined, { signal: this.abort.signal }).catch(() => {});
        if (this.abandoned) continue;
        try {
          const result = await write();
          this.answered();
          return result;
        } catch (err) {
          if (!storeDidNotAnswer(err)) throw err;
          this.failed(err);
        }
      } finally {
        this.probing = undefined;
        done();
      }
    }
  }

  /** One try, for a write that may be skipped (a heartbeat, samples): false when the store did not take it. */
  async try(write: () => Promise<unknown>): Promise<boolean> {
    if (this.down) return false;
    try {
      await write();
      return true;
    } catch (err) {
      if (!storeDidNotAnswer(err)) throw err;
      this.failed(err);
      return false;
    }
  }

  /** From now on a write is tried once more, and its failure is the caller's (the emulator closes). */
  abandon(): void {
    this.abandoned = true;
    this.abort.abort();
  }

  private failed(err: unknown): void {
    const was = this.delayMs;
    this.delayMs = was === 0 ? this.backoff.baseMs : Math.min(this.backoff.capMs, was * 2);
    this.nextTryAt = Date.now() + this.delayMs;
    if (was === 0) {
      const { params } = err as EmulatorError;
      this.onChange?.(true, params.store !== undefined ? `the ${String(params.store)}: ${String(params.reason)}` : (err as Error).message);
    }
  }

  private answered(): void {
    if (this.delayMs === 0) return;
    this.delayMs = 0;
    this.onChange?.(false);
  }
}

export interface LobbyRunOptions {
  lobbyId: string;
  /**
   * The lobby's environment (as `emulator lobby env` prints it, and what `--pass-env` adds). A command also gets the
   * allow-listed part of this process's beneath it (hostEnvironment), nothing else of it.
   */
  env: Record<string, string>;
  ports: RunPort[];
  run: { command: string; cgroup?: LobbyCgroup } | ContainerRun;
  /** Lobbies' working directories go under this (one per lobby, made here): e.g. <data dir>/lobbies. */
  workRoot: string;
  logs: LogSink;
  /** How the lines reach the store through an outage (one gate per emulator: LobbyServers'); a gate of its own else. */
  gate?: WriteGate;
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
  /** Once the server ended and every line it printed is in the Store; `at` is when it ended (ms since the epoch). */
  exited: Promise<ExitInfo & { at: number }>;
  /** The kept samples, oldest first. */
  samples(): TimedSample[];
  stop(graceMs: number): Promise<ExitInfo & { at: number }>;
}

const STREAMS: Record<OutputStream, LogStream> = { stdout: 'std_out', stderr: 'std_err' };
// Lines are written in batches: at most this often, or at this many; a write takes at most FLUSH_BYTES (and one line).
const FLUSH_MS = 100;
const FLUSH_LINES = 256;
const FLUSH_BYTES = 256 * 1024;
// A server's first resource sample, this long after it starts (then one every sampleEveryMs).
const FIRST_SAMPLE_MS = 1_000;
/**
 * Lines of one stream waiting for the store, oldest first, within the store's own bounds (LOG_BOUNDS: what it would
 * keep of them anyway), the oldest dropped first past them. Each line keeps when it arrived (its stamp in the store).
 *
 * The bytes are copied into one ring of their own (grown by doubling, up to the bound), not kept as a Buffer a line:
 * a server printing faster than the store takes it has most of its lines dropped here, and a Buffer a line made
 * each of those garbage outside V8's heap, which it collects only every 64 MiB or so (serve's RSS grew 140 MiB under
 * four such servers). The ring is written over instead; a batch taken out is one Buffer.
 */
export class PendingLines {
  private ring = Buffer.alloc(0);
  /** Where the oldest kept byte is in the ring, and how many bytes are kept (they may wrap around its end). */
  private first = 0;
  bytes = 0;
  private sizes: number[] = [];
  private times: number[] = [];
  private head = 0;

  constructor(private readonly bounds: LogBounds = LOG_BOUNDS) {}

  get count(): number {
    return this.sizes.length - this.head;
  }

  push(line: Buffer, at: number): void {
    const max = this.bounds.bytes;
    if (line.length > max) line = line.subarray(line.length - max);
    while (this.count > 0 && (this.count >= this.bounds.lines || this.bytes + line.length > max)) this.drop();
    if (this.bytes + line.length > this.ring.length) this.grow(Math.min(max, Math.max(64 * 1024, 2 * (this.bytes + line.length))));
    const size = this.ring.length;
    const end = (this.first + this.bytes) % size;
    const fits = Math.min(line.length, size - end);
    line.copy(this.ring, end, 0, fits);
    if (fits < line.length) line.copy(this.ring, 0, fits);
    this.bytes += line.length;
    this.sizes.push(line.length);
    this.times.push(at);
  }

  /** The oldest lines, up to FLUSH_LINES and FLUSH_BYTES (one at least), with the time the first arrived; taken out. */
  take(): { lines: Buffer[]; at: number } | undefined {
    if (this.count === 0) return undefined;
    const at = this.times[this.head]!;
    let n = 0;
    let bytes = 0;
    while (n < this.count && n < FLUSH_LINES && (n === 0 || bytes + this.sizes[this.head + n]! <= FLUSH_BYTES)) bytes += this.sizes[this.head + n++]!;
    const batch = Buffer.allocUnsafe(bytes);
    const fits = Math.min(bytes, this.ring.length - this.first);
    this.ring.copy(batch, 0, this.first, this.first + fits);
    if (fits < bytes) this.ring.copy(batch, fits, 0, bytes - fits);
    const lines: Buffer[] = [];
    for (let i = 0, off = 0; i < n; i++) {
      const len = this.sizes[this.head + i]!;
      lines.push(batch.subarray(off, off + len));
      off += len;
    }
    this.advance(n, bytes);
    return { lines, at };
  }

  private drop(): void {
    this.advance(1, this.sizes[this.head]!);
  }

  private advance(lines: number, bytes: number): void {
    this.head += lines;
    this.bytes -= bytes;
    this.first = this.bytes === 0 ? 0 : (this.first + bytes) % this.ring.length;
    if (this.count === 0) {
      this.sizes = [];
      this.times = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.sizes.length) {
      this.sizes = this.sizes.slice(this.head);
      this.times = this.times.slice(this.head);
      this.head = 0;
    }
  }

  /** A larger ring, the kept bytes moved to its start in order. */
  private grow(size: number): void {
    const ring = Buffer.allocUnsafe(size);
    const fits = Math.min(this.bytes, this.ring.length - this.first);
    this.ring.copy(ring, 0, this.first, this.first + fits);
    if (fits < this.bytes) this.ring.copy(ring, fits, 0, this.bytes - fits);
    this.ring = ring;
    this.first = 0;
  }
}

/**
 * Lines of one lobby to the Store in order, a batch at a time, one write in flight at a time: a batch the store did
 * not take is tried again through the gate (its backoff), while newer lines wait behind it within PendingLines'
 * bounds. Memory for a lobby's lines is so at most the store's bound per stream, plus one batch in flight.
 */
class LogBatcher {
  private readonly pending: Record<LogStream, PendingLines> = { std_out: new PendingLines(), std_err: new PendingLines() };
  /**
   * Per stream, past the stamps the last batch asked for: each batch asks for its own (Store.appendLobbyLogs's
   * firstTs), so a batch written but whose answer was lost in an outage is not written again when it is tried again.
   */
  private readonly nextFirstTs: Record<LogStream, number> = { std_out: 0, std_err: 0 };
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly lobbyId: string,
    private readonly sink: LogSink,
    private readonly gate: WriteGate,
  ) {}

  add(stream: LogStream, line: Buffer): void {
    const queue = this.pending[stream];
    queue.push(line, Date.now());
    if (queue.count >= FLUSH_LINES || queue.bytes >= FLUSH_BYTES) this.flushSoon();
    else
      this.timer ??= setTimeout(() => {
        this.timer = undefined;
        this.flushSoon();
      }, FLUSH_MS);
  }

  /** A flush no one waits for, unless one waits for its turn already (it takes every line there is then). */
  private flushSoon(): void {
    if (!this.queued) this.flush().catch(() => {});
  }

  private queued = false;

  /**
   * Writes what is pending now, waiting through an outage; resolves once it (and every write before it) is in the
   * store. Rejects only when the store refused for another reason or the gate was abandoned (what is left stays).
   */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.queued = true;
    const write = this.writing.then(async () => {
      this.queued = false;
      for (const stream of LOG_STREAMS) {
        for (let batch = this.pending[stream].take(); batch !== undefined; batch = this.pending[stream].take()) {
          const { lines, at } = batch;
          const firstTs = Math.max(at * 1000, this.nextFirstTs[stream]);
          this.nextFirstTs[stream] = firstTs + lines.length;
          await this.gate.run(() => this.sink.append(this.lobbyId, stream, lines, at, firstTs));
        }
      }
    });
    // A failed flush does not hold back the next one.
    this.writing = write.catch(() => {});
    return write;
  }
}

/**
 * Starts a lobby's server: a command in a working directory of the lobby's own, or a build in a container labelled
 * with the lobby. Its output lines go to `logs`; samples are taken every sampleEveryMs while it runs.
 */
export async function startLobbyServer(opts: LobbyRunOptions): Promise<LobbyRun> {
  const { lobbyId, run } = opts;
  const workDir = join(opts.workRoot, lobbyId);
  await mkdir(workDir, { recursive: true, mode: 0o700 });
  const batcher = new LogBatcher(lobbyId, opts.logs, opts.gate ?? new WriteGate());
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
        ? await new ProcessRunner(run.command, run.cgroup).start(spec)
        : await new DockerRunner(run.docker, { image: run.image, owner: run.owner, network: run.network }).start(spec);
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
    const at = Date.now();
    clearTimeout(first);
    clearInterval(sampler);
    // Through an outage too: the lines are written before the exit is (only a closing emulator gives up on them).
    await batcher.flush().catch(() => {});
    await removeIfEmpty(workDir);
    return { ...exit, at };
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
