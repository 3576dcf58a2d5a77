// A lobby's server as a command run through the platform's shell, in a working directory of its own. Its whole
// process tree is one unit: on POSIX a process group of its own (detached; signals go to the negative pid), on
// Windows the tree taskkill walks. CPU and memory are the sum over the tree (pidtree finds it, pidusage measures).
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import pidtree from 'pidtree';
import pidusage from 'pidusage';
import type { LobbyCgroup } from './cgroup.js';
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
  const fields = procStat(pid);
  return fields !== undefined && fields[0] !== 'Z';
}

/**
 * Linux: the fields of /proc/<pid>/stat after the command name (which is in parentheses and may itself hold ") "),
 * from the third on: [0] the state, [19] the start time. Undefined when there is no such process.
 */
function procStat(pid: number): string[] | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined;
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
  if (process.platform === 'linux') return linuxStart(pid);
  if (!isRunning(pid)) return undefined;
  try {
    const stat = await reading(pid);
    return Math.round(stat.timestamp - stat.elapsed);
  } catch {
    return undefined;
  }
}

/**
 * Linux: the boot time (now minus /proc/uptime) plus the process's start in clock ticks since boot (field 22 of
 * /proc/<pid>/stat), the same sum pidusage makes. It asks `getconf` for the tick rate, a child process (25 ms and
 * the wait for it, in every command that looks for a serve); the ticks /proc shows are USER_HZ, 100 on every
 * architecture Node.js runs on.
 */
function linuxStart(pid: number): number | undefined {
  // Gone, or a zombie (it runs nothing; see isRunning).
  const fields = procStat(pid);
  if (fields === undefined || fields[0] === 'Z') return undefined;
  const ticks = Number(fields[19]);
  let uptime: number;
  try {
    uptime = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  } catch {
    return undefined;
  }
  return Number.isFinite(ticks) && Number.isFinite(uptime) ? Math.round(Date.now() - uptime * 1000 + ticks * 10) : undefined;
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

/**
 * What a server in a cgroup is spawned as: a shell that waits for one line on stdin, then becomes the server's shell
 * (exec: the same process, the same pid) with stdin from /dev/null. The emulator moves it into its lobby's cgroup
 * between the spawn and that line, so nothing of the server's runs before it is contained; a wait that ends
 * without the line (the emulator gone) runs nothing.
 */
const HELD = 'read -r _ || exit 125; exec /bin/sh -c "$0" </dev/null';
// How long the processes of a cgroup that was killed may take to be gone (one in an uninterruptible sleep, say)
// before the exit is given anyway; the cgroup is left for the next sweep then.
const CGROUP_DRAIN_MS = 10_000;

export class ProcessRunner implements Runner {
  /**
   * `command` runs through the platform's shell (sh -c, or cmd.exe /d /s /c), as a user types it; in `cgroup` where
   * one is given (Linux: made at start, removed once nothing of the server is left), else as a process group.
   */
  constructor(
    readonly command: string,
    private readonly cgroup?: LobbyCgroup,
  ) {}

  async start(spec: StartSpec): Promise<RunningServer> {
    const cgroup = WINDOWS ? undefined : this.cgroup;
    if (cgroup !== undefined) {
      try {
        await cgroup.create();
      } catch (err) {
        await cgroup.remove();
        throw new RunnerError(`could not make the cgroup of "${this.command}" (${cgroup.dir}): ${(err as Error).message}`);
      }
    }
    const child =
      cgroup === undefined
        ? spawn(this.command, {
            shell: true,
            cwd: spec.workDir,
            env: spec.env,
            // A group of its own on POSIX, so the whole tree is signalled at once and none of it is left behind.
            detached: !WINDOWS,
            stdio: ['ignore', 'pipe', 'pipe'],
            windowsHide: true,
          })
        : // Its own group still (a terminal's Ctrl-C goes to serve, not to it); the cgroup holds what leaves the group.
          spawn('/bin/sh', ['-c', HELD, this.command], { cwd: spec.workDir, env: spec.env, detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
    try {
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', (err) => reject(new RunnerError(`could not start "${this.command}" in ${spec.workDir}: ${err.message}`)));
      });
    } catch (err) {
      await cgroup?.remove();
      throw err;
    }
    if (cgroup !== undefined) {
      child.stdin!.on('error', () => {});
      try {
        await cgroup.place(child.pid!);
      } catch (err) {
        child.kill('SIGKILL');
        await new Promise((resolve) => child.once('close', resolve));
        await cgroup.remove();
        throw new RunnerError(`could not move "${this.command}" into its cgroup ${cgroup.dir}: ${(err as Error).message}`);
      }
      child.stdin!.end('\n');
    }
    return new RunningProcess(child, spec, cgroup);
  }
}

class RunningProcess implements RunningServer {
  readonly description: string;
  readonly exited: Promise<ExitInfo>;
  readonly pid: number;
  private exit: ExitInfo | undefined;
  /** A stop's work (SIGTERM, the grace, SIGKILL), once asked; done once nothing of the server is left. */
  private stopping: Promise<void> | undefined;

  constructor(
    child: ChildProcess,
    spec: StartSpec,
    private readonly cgroup: LobbyCgroup | undefined,
  ) {
    this.pid = child.pid!;
    this.description = cgroup === undefined ? `pid ${this.pid}` : `pid ${this.pid}, cgroup ${cgroup.dir}`;
    const out = new LineSplitter((line) => spec.onLine('stdout', line));
    const err = new LineSplitter((line) => spec.onLine('stderr', line));
    child.stdout!.on('data', (chunk: Buffer) => out.push(chunk));
    child.stderr!.on('data', (chunk: Buffer) => err.push(chunk));
    child.stdout!.once('end', () => out.end());
    child.stderr!.once('end', () => err.end());
    const closed = new Promise<void>((resolve) => child.once('close', () => resolve()));
    const leader = new Promise<void>((resolve) => {
      child.once('exit', (code, sig) => {
        this.exit = { code, signal: sig };
        resolve();
      });
    });
    this.exited = (async () => {
      await leader;
      // The server ended by itself: whatever it started goes with it, now; a stop in progress ends them itself.
      // Either way the exit is given only once nothing of the server is left.
      await (this.stopping ?? this.end());
      // Something that left the tree (no cgroup) may still hold the pipes: they are closed after a moment.
      const unstick = setTimeout(() => {
        child.stdout!.destroy();
        child.stderr!.destroy();
      }, PIPE_WAIT_MS);
      await closed;
      clearTimeout(unstick);
      await this.cgroup?.remove();
      return this.exit!;
    })();
  }

  /** Ends every process of the server at once: its cgroup (waiting until it is empty), else its group. */
  private async end(): Promise<void> {
    if (this.cgroup !== undefined) {
      await this.cgroup.kill();
      await this.cgroup.drain(CGROUP_DRAIN_MS);
    } else this.signalTree([], 'SIGKILL');
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

  /** True once the leader has exited and nothing else of the server runs (its cgroup, else `pids`), within `ms`. */
  private async gone(pids: number[], ms: number): Promise<boolean> {
    const deadline = performance.now() + ms;
    for (;;) {
      if (this.exit !== undefined && !(this.cgroup === undefined ? pids.some(isRunning) : await this.cgroup.populated())) return true;
      if (performance.now() >= deadline) return false;
      await sleep(POLL_MS);
    }
  }

  stop(graceMs: number): Promise<ExitInfo> {
    this.stopping ??= (async () => {
      if (this.cgroup !== undefined) {
        // Every process of the cgroup, setsid'd or not, is asked; what has not ended after the grace is killed.
        await this.cgroup.signal('SIGTERM');
        if (!(await this.gone([], graceMs))) await this.end();
        return;
      }
      // The tree as it is now, children that left the group included; the group catches what starts after.
      const pids = this.exit === undefined ? await treeOf(this.pid) : [];
      this.signalTree(pids, 'SIGTERM');
      if (!(await this.gone(pids, graceMs))) {
        this.signalTree(pids, 'SIGKILL');
        await this.gone(pids, KILL_WAIT_MS);
      }
      // Whatever of the group is still there (started during the grace period) goes too.
      if (!WINDOWS) signal(-this.pid, 'SIGKILL');
    })();
    return this.stopping.then(() => this.exited);
  }

  async sample(): Promise<ResourceSample | undefined> {
    if (this.exit !== undefined) return undefined;
    // The cgroup's processes are all of the server's, those that left its tree included; without one, its tree.
    const pids = this.cgroup !== undefined ? await this.cgroup.procs() : await treeOf(this.pid);
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
