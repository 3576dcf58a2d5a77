// What runs a lobby's game server, whatever runs it: one small interface (start with an environment, a working
// directory and ports; stop with a grace period; an exit; output lines; resource samples), and one file per way
// of running (process.ts, docker.ts). The matchmaker's rules stay in services/; this only runs things.
import { MAX_LOG_LINE_BYTES } from '../stores/store.js';

export type OutputStream = 'stdout' | 'stderr';

/** A port the server listens on, as its game mode declares it; the host port is picked by the caller. */
export interface RunPort {
  label: string;
  protocol: 'tcp' | 'udp' | 'http';
  /** The port on this host the server is reached at (published on loopback, or bound directly). */
  port: number;
}

export interface StartSpec {
  /** The lobby's environment, the whole of it: a runner adds nothing of its own process's. */
  env: Record<string, string>;
  /** A directory of the lobby's own, made by the caller (the process's working directory; kept for containers). */
  workDir: string;
  ports: RunPort[];
  /** What tells this server apart where a runner labels what it starts (a container's labels), e.g. its lobby. */
  labels?: Record<string, string>;
  /**
   * Each output line, without its line ending (a line longer than MAX_LOG_LINE_BYTES comes in pieces). The Buffer
   * may be a view of the runner's read buffer, good for this call only: whoever keeps the line copies it.
   */
  onLine(stream: OutputStream, line: Buffer): void;
}

/** How the server ended: its exit code, or the signal that ended it (then code is null). */
export interface ExitInfo {
  code: number | null;
  signal: string | null;
}

/** CPU (percent of one core, over the time since the previous sample) and memory (bytes resident) of the whole server. */
export interface ResourceSample {
  cpu: number;
  memory: number;
}

export interface RunningServer {
  /** What identifies it on this host: `pid 1234`, `container 3f2a…`. */
  readonly description: string;
  /** The process it runs as, where it is one (its process group's leader on POSIX); undefined for a container. */
  readonly pid?: number;
  /** Resolves once it has ended and its output has been delivered, whichever way it ended. */
  readonly exited: Promise<ExitInfo>;
  /**
   * Asks it to end (SIGTERM), then ends it (SIGKILL) after graceMs; resolves once nothing of it is left (no process
   * of its tree, no container). Asking again, or after it ended by itself, is harmless.
   */
  stop(graceMs: number): Promise<ExitInfo>;
  /** A resource sample now; undefined once it has ended. */
  sample(): Promise<ResourceSample | undefined>;
}

export interface Runner {
  start(spec: StartSpec): Promise<RunningServer>;
}

/** Thrown when a runner cannot start what it was given (no Docker, an unsupported build): one line for a person. */
export class RunnerError extends Error {
  override name = 'RunnerError';
}

/**
 * Splits a byte stream into lines: LF ends a line (a CR before it is dropped), a line reaching `max` bytes is
 * passed on in pieces, and what is left at the end counts as a last line. Memory stays within `max` per stream.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;

  constructor(
    private readonly emit: (line: Buffer) => void,
    private readonly max = MAX_LOG_LINE_BYTES,
  ) {}

  push(chunk: Buffer): void {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(0x0a, start);
      const end = nl === -1 ? chunk.length : nl;
      // A piece that would pass max goes out full, without waiting for its newline.
      let at = start;
      while (end - at > this.max - this.pendingBytes) {
        const take = this.max - this.pendingBytes;
        this.pending.push(chunk.subarray(at, at + take));
        this.pendingBytes += take;
        at += take;
        this.flush(false);
      }
      if (at < end) {
        this.pending.push(chunk.subarray(at, end));
        this.pendingBytes += end - at;
      }
      if (nl === -1) return;
      this.flush(true);
      start = nl + 1;
    }
  }

  /** The stream ended: a last line without its newline still counts. */
  end(): void {
    if (this.pendingBytes > 0) this.flush(true);
  }

  private flush(endOfLine: boolean): void {
    let line = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending, this.pendingBytes);
    if (endOfLine && line.length > 0 && line[line.length - 1] === 0x0d) line = line.subarray(0, -1);
    // Not copied: a view of the chunk, good for this call (see StartSpec.onLine); whoever keeps a line copies it.
    this.emit(line);
    this.pending = [];
    this.pendingBytes = 0;
  }
}
