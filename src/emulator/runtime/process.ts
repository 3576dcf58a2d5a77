// A lobby's server as a command run through the platform's shell, in a working directory of its own. Its whole
// process tree is one unit: on POSIX a process group of its own (detached; signals go to the negative pid), on
// Windows the tree taskkill walks. CPU and memory are the sum over the tree (pidtree finds it, pidusage measures).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pidtree from 'pidtree';
import pidusage from 'pidusage';
import { LineSplitter, RunnerError, type ExitInfo, type ResourceSample, type Runner, type RunningServer, type StartSpec } from './runtime.js';

const WINDOWS = process.platform === 'win32';

/**
 * The host's variables a lobby's server gets beside its lobby's own (and the names `--pass-env` adds): what a program
 * needs to find its tools, its home, its locale, its time zone and a place for temporary files. Nothing else of the
 * emulator's environment reaches a server: not its admin token, its signing secret, its database URL, nor a
 * developer's cloud credentials. On Windows also what cmd.exe and Windows' own libraries look for.
 */
export const HOST_VARIABLES: readonly string[] = Object.freeze([
  'PATH', 'HOME', 'USER', 'LOGNAME', 'SHELL', 'LANG', 'LANGUAGE', 'LC_*', 'TZ', 'TMPDIR', 'TEMP', 'TMP',
  'SystemRoot', 'SystemDrive', 'windir', 'ComSpec', 'PATHEXT', 'USERPROFILE', 'USERNAME', 'HOMEDRIVE', 'HOMEPATH',
  'APPDATA', 'LOCALAPPDATA', 'ProgramData', 'ProgramFiles', 'ProgramFiles(x86)', 'ProgramW6432', 'CommonProgramFiles',
  'NUMBER_OF_PROCESSORS', 'PROCESSOR_ARCHITECTURE', 'OS',
]);

/**
 * The allow-listed part of `env` (HOST_VARIABLES; `LC_*` is every locale variable). Names are matched as the platform
 * does: exactly on POSIX, whatever their case on Windows.
 */
export function hostEnvironment(env: Record<string, string | undefined>, windows = WINDOWS): Record<string, string> {
  const fold = (name: string) => (windows ? name.toUpperCase() : name);
  const exact = new Set(HOST_VARIABLES.filter((n) => !n.endsWith('*')).map(fold));
  const prefixes = HOST_VARIABLES.filter((n) => n.endsWith('*')).map((n) => fold(n.slice(0, -1)));
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value === undefined) continue;
    const key = fold(name);
    if (exact.has(key) || prefixes.some((p) => key.startsWith(p))) out[name] = value;
  }
  return out;
}
// After SIGKILL a process ends at once; this bounds the wait for the kernel to say so.
const KILL_WAIT_MS = 2_000;
// A process that left the tree but still holds its output pipes open does not hold the exit for longer than this.
const PIPE_WAIT_MS = 1_000;
const POLL_MS = 25;
/**
 * pidusage keeps each process's last reading (on Linux with its /proc/<pid>/stat open, for the CPU of the next one)
 * until it has not been read for this long; its clear() forgets them without closing them, so it is never called.
 * Three of the service's 5 s sampling periods: a lobby's server's descriptors are closed within ~1.5x this of its end.
 */
const READING_KEPT_MS = 15_000;
const inFlight = new Map<number, Promise<pidusage.Status>>();

/**
 * One pidusage reading of `pid`, shared by whoever asks while it is under way: two first readings of one process at
 * once (a server's first sample and its start time, as it starts) each open its /proc/<pid>/stat, and pidusage keeps
 * only the second, the first left open for good.
 */
function reading(pid: number): Promise<pidusage.Status> {
  let read = inFlight.get(pid);
  if (read === undefined) {
    read = pidusage(pid, { maxage: READING_KEPT_MS }).finally(() => inFlight.delete(pid));
    inFlight.set(pid, read);
  }
  return read;
}

/**
 * Whether a process runs: it exists and, on Linux, is not a zombie (ended, waiting for a parent that may never reap
 * it: an orphan's new parent is often an init that does not). A zombie runs nothing and holds nothing but its pid.
 */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  if (process.platform !== 'linux') return true;
  try {
    // The state is the field after the command name, which is in parentheses and may itself hold ") ".
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

/** The pids of a process and all its descendants (by parent pid); just the process when it cannot be listed. */
async function treeOf(pid: number): Promise<number[]> {
  try {
    return await pidtree(pid, { root: true });
  } catch {
    return [pid];
  }
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    // Gone already.
  }
}

// Two readings of one process's start time differ by the clock's ticks and the uptime's rounding: well under this.
const START_TOLERANCE_MS = 1_000;

/**
 * When a process started (milliseconds since the epoch, as pidusage reads it: now minus its elapsed time), or
 * undefined when it does not run. With the pid it tells that process apart from a later one given the same pid.
 */
export async function processStart(pid: number): Promise<number | undefined> {
  if (!isRunning(pid)) return undefined;
  try {
    const stat = await reading(pid);
    return Math.round(stat.timestamp - stat.elapsed);
  } catch {
    return undefined;
  }
}

/** Whether `pid` still is the process that started at `start` (processStart), not another given its pid since. */
export async function isSameProcess(pid: number, start: number): Promise<boolean> {
  const now = await processStart(pid);
  return now !== undefined && Math.abs(now - start) <= START_TOLERANCE_MS;
}

/**
 * Ends what a server started by an emulator that died left running: its process group (POSIX) or tree (Windows)
 * and its tree by parent pid, at once (SIGKILL: nobody waits for it), only when `pid` still is the process that
 * started at `start`. Answers whether it was there to end.
 */
export async function killLeftover(pid: number, start: number): Promise<boolean> {
  if (!(await isSameProcess(pid, start))) return false;
  const pids = await treeOf(pid);
  if (WINDOWS) execFile('taskkill', ['/pid', String(pid), '/T', '/F'], { windowsHide: true }, () => {});
  else signal(-pid, 'SIGKILL');
  for (const p of pids) signal(p, 'SIGKILL');
  const deadline = performance.now() + KILL_WAIT_MS;
  while (pids.some(isRunning) && performance.now() < deadline) await sleep(POLL_MS);
  return true;
}

export class ProcessRunner implements Runner {
  /** `command` runs through the platform's shell (sh -c, or cmd.exe /d /s /c), as a user types it. */
  constructor(readonly command: string) {}

  async start(spec: StartSpec): Promise<RunningServer> {
    const child = spawn(this.command, {
      shell: true,
      cwd: spec.workDir,
      env: spec.env,
      // A group of its own on POSIX, so the whole tree is signalled at once and none of it is left behind.
      detached: !WINDOWS,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    });
    await new Promise<void>((resolve, reject) => {
      child.once('spawn', resolve);
      child.once('error', (err) => reject(new RunnerError(`could not start "${this.command}" in ${spec.workDir}: ${err.message}`)));
    });
    return new RunningProcess(child, spec);
  }
}

class RunningProcess implements RunningServer {
  readonly description: string;
  readonly exited: Promise<ExitInfo>;
  readonly pid: number;
  private exit: ExitInfo | undefined;
  private stopping: Promise<ExitInfo> | undefined;

  constructor(
    child: ChildProcess,
    spec: StartSpec,
  ) {
    this.pid = child.pid!;
    this.description = `pid ${this.pid}`;
    const out = new LineSplitter((line) => spec.onLine('stdout', line));
    const err = new LineSplitter((line) => spec.onLine('stderr', line));
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
    child.stdout!.once('end', () => out.end());
    child.stderr!.once('end', () => err.end());
    this.exited = new Promise<ExitInfo>((resolve) => {
      child.once('exit', (code, sig) => {
        this.exit = { code, signal: sig };
        // The server ended by itself: whatever it started goes with it, now. (A stop in progress ends them itself.)
        if (this.stopping === undefined) this.signalTree([], 'SIGKILL');
        // Something that left the tree may still hold the pipes: they are closed after a moment, so the exit is not held.
        const unstick = setTimeout(() => {
          child.stdout!.destroy();
          child.stderr!.destroy();
        }, PIPE_WAIT_MS);
        child.once('close', () => {
          clearTimeout(unstick);
          resolve(this.exit!);
        });
      });
    });
  }

  /** Signals the group (POSIX) and each pid given; on Windows, the tree through taskkill (forced for SIGKILL). */
  private signalTree(pids: number[], sig: NodeJS.Signals): void {
    if (WINDOWS) {
      const args = ['/pid', String(this.pid), '/T', ...(sig === 'SIGKILL' ? ['/F'] : [])];
      execFile('taskkill', args, { windowsHide: true }, () => {});
      return;
    }
    signal(-this.pid, sig);
    for (const pid of pids) signal(pid, sig);
  }

  /** True once the leader has exited and none of `pids` runs, within `ms`. */
  private async gone(pids: number[], ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    for (;;) {
      if (this.exit !== undefined && !pids.some(isRunning)) return true;
      if (performance.now() >= deadline) return false;
      await sleep(POLL_MS);
    }
  }

  stop(graceMs: number): Promise<ExitInfo> {
    this.stopping ??= (async () => {
      // The tree as it is now, children that left the group included; the group catches what starts after.
      const pids = this.exit === undefined ? await treeOf(this.pid) : [];
      this.signalTree(pids, 'SIGTERM');
      if (!(await this.gone(pids, graceMs))) {
        this.signalTree(pids, 'SIGKILL');
        await this.gone(pids, KILL_WAIT_MS);
      }
      // Whatever of the group is still there (started during the grace period) goes too.
      if (!WINDOWS) signal(-this.pid, 'SIGKILL');
      return this.exited;
    })();
    return this.stopping;
  }

  async sample(): Promise<ResourceSample | undefined> {
    if (this.exit !== undefined) return undefined;
    const pids = await treeOf(this.pid);
    // One at a time: a process that ends meanwhile is left out, not the whole sample.
    const stats = await Promise.allSettled(pids.map(reading));
    let cpu = 0;
    let memory = 0;
    for (const s of stats) {
      if (s.status !== 'fulfilled') continue;
      cpu += s.value.cpu;
      memory += s.value.memory;
    }
    return this.exit === undefined ? { cpu, memory } : undefined;
  }
}
