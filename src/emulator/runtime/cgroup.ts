// Linux control groups for lobbies' servers: every process a server starts (double-forked, setsid'd, a fork bomb)
// stays in its lobby's cgroup, so a stop ends all of it at once, and the tier's memory and pids limits hold for the
// whole tree. cgroup v2 where the emulator may make one (cgroup.kill ends a cgroup and what is below it in one write;
// memory.max and pids.max where those controllers are enabled); cgroup v1 otherwise or beside it (the freezer
// controller: freeze, SIGKILL every process, thaw, so none forks meanwhile; memory.limit_in_bytes and pids.max).
// Each emulator makes its cgroups under its own (as /proc/self/cgroup names it, so a delegated subtree works as well
// as root), named <own>/gamehost/<replica>/<emulator pid>-<start>/<lobby id>: a sweep finds what a dead emulator left.
import { readdirSync, readFileSync } from 'node:fs';
import { access, mkdir, readdir, readFile, rmdir, writeFile } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

/** The limits a lobby's cgroup gets: its tier's memory (the default tier's unless its version names another) and pids. */
export interface CgroupLimits {
  /** Bytes: the tier's hard limit (RIVET_MEMORY_OVERSUBSCRIBE). */
  memory: number;
  /** Processes and threads, at most. */
  pids: number;
}

/** A hierarchy this process is in, and the directory of its own cgroup there. */
export interface Hierarchy {
  version: 1 | 2;
  /** v1: the controllers the hierarchy holds (memory, pids, freezer…); v2: none (see cgroup.controllers). */
  controllers: string[];
  /** This process's cgroup in it, as a directory. */
  dir: string;
}

/** Undoes mountinfo's octal escapes (a space is \040). */
const unescape = (s: string) => s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));

/**
 * The hierarchies this process is in, with its cgroup's directory in each: /proc/self/cgroup (`id:controllers:path`,
 * `0::path` for v2) against /proc/self/mountinfo (where each hierarchy is mounted, and which of it: a container's
 * mount may be a subtree). A hierarchy mounted nowhere, or whose mount does not reach this cgroup, is left out.
 */
export function ownHierarchies(procSelfCgroup: string, mountinfo: string): Hierarchy[] {
  const mounts = mountinfo
    .split('\n')
    .filter((l) => l.includes(' - '))
    .map((line) => {
      const [left, right] = line.split(' - ') as [string, string];
      const f = left.split(' ');
      const [fstype, , superopts = ''] = right.split(' ');
      return { root: unescape(f[3] ?? ''), point: unescape(f[4] ?? ''), fstype, options: superopts.split(',') };
    });
  const out: Hierarchy[] = [];
  for (const line of procSelfCgroup.split('\n')) {
    const m = /^(\d+):([^:]*):(.*)$/.exec(line);
    if (m === null) continue;
    const [, id, list, path] = m as unknown as [string, string, string, string];
    const v2 = id === '0' && list === '';
    const controllers = v2 ? [] : list.split(',').filter((c) => c !== '' && !c.startsWith('name='));
    if (!v2 && controllers.length === 0) continue;
    const mount = mounts.find((mt) => (v2 ? mt.fstype === 'cgroup2' : mt.fstype === 'cgroup' && controllers.every((c) => mt.options.includes(c))));
    if (mount === undefined) continue;
    const rel = posix.relative(mount.root, path);
    if (rel.startsWith('..') || posix.isAbsolute(rel)) continue;
    out.push({ version: v2 ? 2 : 1, controllers, dir: rel === '' ? mount.point : posix.join(mount.point, rel) });
  }
  return out;
}

/** The hierarchies of this process, read from /proc; none off Linux or where /proc cannot be read. */
export function readOwnHierarchies(): Hierarchy[] {
  if (process.platform !== 'linux') return [];
  try {
    return ownHierarchies(readFileSync('/proc/self/cgroup', 'utf8'), readFileSync('/proc/self/mountinfo', 'utf8'));
  } catch {
    return [];
  }
}

/**
 * An emulator as its cgroups and records name it: its process (pid and start time) and, where one process runs
 * more than one emulator (tests, tools), which of them (an instance number, 0 for the first).
 */
export interface EmulatorOwner {
  pid: number;
  start: number;
  instance?: number;
}

/** `<pid>-<start>`, and `-<instance>` for a process's second emulator and later. */
export function ownerName(owner: EmulatorOwner): string {
  return `${owner.pid}-${owner.start}${owner.instance ? `-${owner.instance}` : ''}`;
}

/** The directory (under a hierarchy's own cgroup) of an emulator's cgroups: gamehost/<replica>/<owner name>. */
export function ownerPath(replica: string, owner: EmulatorOwner): string {
  return posix.join('gamehost', replica, ownerName(owner));
}

/** An owner directory's emulator, from its name (ownerName); undefined for a name that is not one. */
export function ownerOf(name: string): { pid: number; start: number } | undefined {
  const m = /^(\d{1,10})-(\d{1,16})(?:-\d{1,6})?$/.exec(name);
  return m === null ? undefined : { pid: Number(m[1]), start: Number(m[2]) };
}

/** What the emulator uses of a hierarchy: its owner directory there, and what for. */
interface Part {
  version: 1 | 2;
  /** <own>/gamehost/<replica>/<owner>. */
  ownerDir: string;
  /** How this part ends a lobby's processes, if it is the one that does. */
  kill?: 'cgroup.kill' | 'freezer';
  memory?: boolean;
  pids?: boolean;
}

const errno = (err: unknown) => (err as NodeJS.ErrnoException).code;

async function writeCg(dir: string, file: string, value: string): Promise<void> {
  await writeFile(join(dir, file), value);
}

/** The pids in a cgroup (cgroup.procs); none when it is gone. */
export async function cgroupProcs(dir: string): Promise<number[]> {
  try {
    return (await readFile(join(dir, 'cgroup.procs'), 'utf8')).split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

function signalAll(pids: number[], sig: NodeJS.Signals): void {
  for (const pid of pids) {
    try {
      process.kill(pid, sig);
    } catch {
      // Gone already.
    }
  }
}

/** Whether anything still runs in a cgroup: v2's cgroup.events (its subtree too), v1's cgroup.procs. */
async function populated(dir: string): Promise<boolean> {
  try {
    return /^populated 1$/m.test(await readFile(join(dir, 'cgroup.events'), 'utf8'));
  } catch (err) {
    if (errno(err) !== 'ENOENT') return false;
  }
  return (await cgroupProcs(dir)).length > 0;
}

/**
 * Ends every process in a cgroup at once, whatever it does meanwhile: v2 writes cgroup.kill (the kernel kills the
 * cgroup and its subtree, forks included); a v1 freezer cgroup is frozen, each process sent SIGKILL (none can fork
 * while frozen) and thawed so the signals are taken; any other cgroup gets SIGKILL to each of its processes, again
 * until none is left.
 */
export async function killCgroup(dir: string): Promise<void> {
  try {
    await writeCg(dir, 'cgroup.kill', '1');
    return;
  } catch (err) {
    if (errno(err) !== 'ENOENT' && errno(err) !== 'EACCES' && errno(err) !== 'EPERM') return;
  }
  let frozen = false;
  try {
    await writeCg(dir, 'freezer.state', 'FROZEN');
    frozen = true;
    // FREEZING until every task has stopped; bounded, as a task in an uninterruptible sleep may take its time.
    for (let i = 0; i < 40 && (await readFile(join(dir, 'freezer.state'), 'utf8')).trim() !== 'FROZEN'; i++) await sleep(5);
  } catch {
    // Not a freezer cgroup: signal what is there.
  }
  signalAll(await cgroupProcs(dir), 'SIGKILL');
  if (frozen) await writeCg(dir, 'freezer.state', 'THAWED').catch(() => {});
}

/** Waits until nothing runs in `dir`, ending it again each round (a fork that raced a v1 kill); false past `ms`. */
export async function drainCgroup(dir: string, ms: number): Promise<boolean> {
  const deadline = performance.now() + ms;
  for (let round = 0; ; round++) {
    if (!(await populated(dir))) return true;
    if (performance.now() >= deadline) return false;
    if (round % 8 === 7) await killCgroup(dir);
    await sleep(10);
  }
}

/** Removes a cgroup that nothing runs in (and its empty sub-cgroups, deepest first); one still busy is left. */
export async function removeCgroup(dir: string): Promise<void> {
  let entries: string[] = [];
  try {
    entries = (await readdir(dir, { withFileTypes: true })).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return;
  }
  for (const sub of entries) await removeCgroup(join(dir, sub));
  await rmdir(dir).catch(() => {});
}

/** The one line serve says about how it contains servers. */
export interface CgroupsDescription {
  kill: string;
  limits: string;
}

/**
 * The cgroups one emulator makes for its lobbies' servers, decided once at start: in which hierarchies, which of
 * them ends a lobby's processes, which holds its limits. `open` answers undefined where no cgroup can be made.
 */
export class Cgroups {
  private constructor(
    private readonly parts: Part[],
    readonly limits: CgroupLimits,
  ) {}

  /** The owner directories this emulator made (one per hierarchy it uses), for the record a sweep reads. */
  get ownerDirs(): string[] {
    return this.parts.map((p) => p.ownerDir);
  }

  describe(): CgroupsDescription {
    const killer = this.parts.find((p) => p.kill !== undefined)!;
    const limit = (what: 'memory' | 'pids') => {
      const p = this.parts.find((x) => x[what]);
      return p === undefined ? undefined : `${what} (v${p.version})`;
    };
    const limits = [limit('memory'), limit('pids')].filter((x) => x !== undefined);
    return {
      kill: `${killer.kill === 'cgroup.kill' ? 'cgroup v2, cgroup.kill' : 'cgroup v1, freezer'} at ${posix.dirname(posix.dirname(posix.dirname(killer.ownerDir)))}/gamehost`,
      limits: limits.length === 0 ? 'no limits (no memory or pids controller this process may use)' : `limits: ${limits.join(', ')}`,
    };
  }

  /**
   * Makes this emulator's owner directories where it may and checks that a process can be placed and ended there;
   * undefined when none would do (not Linux, no cgroup this process may write to, a kernel without cgroup.kill and
   * no freezer). `hierarchies` is readOwnHierarchies() unless given (tests).
   */
  static async open(opts: { replica: string; owner: EmulatorOwner; limits: CgroupLimits; hierarchies?: Hierarchy[] }): Promise<Cgroups | undefined> {
    const hierarchies = opts.hierarchies ?? readOwnHierarchies();
    const rel = ownerPath(opts.replica, opts.owner);
    const parts: Part[] = [];
    const v2 = hierarchies.find((h) => h.version === 2);
    if (v2 !== undefined) {
      const ownerDir = join(v2.dir, rel);
      if (await makeDir(ownerDir)) {
        const part: Part = { version: 2, ownerDir };
        // cgroup.kill is in every cgroup but the root from Linux 5.14.
        if (await exists(join(ownerDir, 'cgroup.kill'))) part.kill = 'cgroup.kill';
        const enabled = await enableControllers(v2.dir, rel, ['memory', 'pids']);
        part.memory = enabled.includes('memory');
        part.pids = enabled.includes('pids');
        if (part.kill !== undefined || part.memory || part.pids) parts.push(part);
        else await removeOwnerDir(ownerDir);
      }
    }
    const v1 = (controller: string) => hierarchies.find((h) => h.version === 1 && h.controllers.includes(controller));
    const needs: [string, (p: Part) => void, boolean][] = [
      ['freezer', (p) => (p.kill = 'freezer'), !parts.some((p) => p.kill !== undefined)],
      ['memory', (p) => (p.memory = true), !parts.some((p) => p.memory)],
      ['pids', (p) => (p.pids = true), !parts.some((p) => p.pids)],
    ];
    for (const [controller, use, needed] of needs) {
      const h = v1(controller);
      if (!needed || h === undefined) continue;
      const ownerDir = join(h.dir, rel);
      let part = parts.find((p) => p.ownerDir === ownerDir);
      if (part === undefined) {
        if (!(await makeDir(ownerDir))) continue;
        part = { version: 1, ownerDir };
        parts.push(part);
      }
      use(part);
    }
    const cgroups = new Cgroups(parts, opts.limits);
    if (!parts.some((p) => p.kill !== undefined) || !(await cgroups.probe())) {
      await cgroups.close();
      return undefined;
    }
    return cgroups;
  }

  /** A lobby's cgroup (made by its create). */
  /** A lobby's cgroup; `limits` its tier's where they differ from the emulator's default tier. */
  lobby(lobbyId: string, limits: Partial<CgroupLimits> = {}): LobbyCgroup {
    return new LobbyCgroup(this.parts.map((p) => ({ ...p, dir: join(p.ownerDir, lobbyId) })), { ...this.limits, ...limits });
  }

  /** A process placed in a cgroup of this emulator and ended there, once, proves the way works before any lobby. */
  private async probe(): Promise<boolean> {
    const { spawn } = await import('node:child_process');
    const cg = this.lobby('probe');
    try {
      await cg.create();
      const child = spawn('/bin/sh', ['-c', 'read -r _'], { stdio: ['pipe', 'ignore', 'ignore'] });
      const exited = new Promise<void>((resolve) => child.once('close', () => resolve()));
      await new Promise<void>((resolve, reject) => {
        child.once('spawn', resolve);
        child.once('error', reject);
      });
      try {
        await cg.place(child.pid!);
      } finally {
        await cg.kill();
        child.kill('SIGKILL');
        await exited;
      }
      return await cg.drain(2_000);
    } catch {
      return false;
    } finally {
      await cg.remove();
    }
  }

  /** Removes this emulator's owner directories (what is in them must be gone: close after every server stopped). */
  async close(): Promise<void> {
    for (const p of this.parts) await removeOwnerDir(p.ownerDir);
  }
}

/** One lobby's cgroup: a directory in each hierarchy the emulator uses. */
export class LobbyCgroup {
  constructor(
    private readonly parts: (Part & { dir: string })[],
    private readonly limits: CgroupLimits,
  ) {}

  /** Where it is, for a person (the one that ends its processes). */
  get dir(): string {
    return this.killer.dir;
  }

  private get killer(): Part & { dir: string } {
    return this.parts.find((p) => p.kill !== undefined)!;
  }

  /** Makes its directories, with the tier's limits. */
  async create(): Promise<void> {
    for (const p of this.parts) {
      await mkdir(p.dir, { recursive: true });
      if (p.memory) await writeCg(p.dir, p.version === 2 ? 'memory.max' : 'memory.limit_in_bytes', String(this.limits.memory));
      if (p.pids) await writeCg(p.dir, 'pids.max', String(this.limits.pids));
    }
  }

  /** Moves a process into it, in every hierarchy (before it runs anything of the server's: see ProcessRunner). */
  async place(pid: number): Promise<void> {
    for (const p of this.parts) await writeCg(p.dir, 'cgroup.procs', String(pid));
  }

  /** Every process in it now. */
  procs(): Promise<number[]> {
    return cgroupProcs(this.killer.dir);
  }

  /** Sends `sig` to every process in it now (a stop's SIGTERM). */
  async signal(sig: NodeJS.Signals): Promise<void> {
    signalAll(await this.procs(), sig);
  }

  /** Ends every process in it at once (killCgroup). */
  kill(): Promise<void> {
    return killCgroup(this.killer.dir);
  }

  /** Waits until nothing runs in it; false past `ms`. */
  drain(ms: number): Promise<boolean> {
    return drainCgroup(this.killer.dir, ms);
  }

  /** Whether anything runs in it. */
  populated(): Promise<boolean> {
    return populated(this.killer.dir);
  }

  /** Removes its directories (once nothing runs in it). */
  async remove(): Promise<void> {
    for (const p of this.parts) await removeCgroup(p.dir);
  }
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

async function makeDir(dir: string): Promise<boolean> {
  try {
    await mkdir(dir, { recursive: true });
    return true;
  } catch {
    return false;
  }
}

/**
 * Enables `wanted` controllers from `base` (this process's cgroup) down to base/rel's parent, so cgroups made in
 * base/rel may have them; answers those now enabled all the way. A cgroup other than the root that has processes
 * cannot enable controllers for its children (cgroup v2's no-internal-processes rule): then only what is enabled
 * there already (a delegated subtree's) is had.
 */
async function enableControllers(base: string, rel: string, wanted: string[]): Promise<string[]> {
  let have = wanted;
  let dir = base;
  for (const step of ['', ...rel.split('/')]) {
    dir = step === '' ? base : join(dir, step);
    let available: string[];
    try {
      available = (await readFile(join(dir, 'cgroup.controllers'), 'utf8')).trim().split(/\s+/);
    } catch {
      return [];
    }
    have = have.filter((c) => available.includes(c));
    if (have.length === 0) return [];
    // The owner directory itself only needs them available; its lobby cgroups (below it) need them enabled in it.
    const enabled = (await readFile(join(dir, 'cgroup.subtree_control'), 'utf8').catch(() => '')).trim().split(/\s+/);
    const missing = have.filter((c) => !enabled.includes(c));
    if (missing.length > 0) await writeCg(dir, 'cgroup.subtree_control', missing.map((c) => `+${c}`).join(' ')).catch(() => {});
    const now = (await readFile(join(dir, 'cgroup.subtree_control'), 'utf8').catch(() => '')).trim().split(/\s+/);
    have = have.filter((c) => now.includes(c));
  }
  return have;
}

/**
 * Removes an owner directory (and its empty lobby cgroups), then its replica's and the gamehost directory while
 * they are empty (a sibling's are left: rmdir refuses a directory that is not).
 */
async function removeOwnerDir(ownerDir: string): Promise<void> {
  await removeCgroup(ownerDir);
  const replicaDir = posix.dirname(ownerDir);
  await rmdir(replicaDir).catch(() => {});
  await rmdir(posix.dirname(replicaDir)).catch(() => {});
}

/**
 * The lobby cgroups an emulator left under its owner directory `ownerDir`: each ended and removed, then the owner
 * directory. Answers how many held a process.
 */
export async function sweepOwnerDir(ownerDir: string): Promise<number> {
  let lobbies: string[];
  try {
    lobbies = readdirSync(ownerDir, { withFileTypes: true }).filter((e) => e.isDirectory()).map((e) => e.name);
  } catch {
    return 0;
  }
  let ended = 0;
  for (const lobby of lobbies) {
    const dir = join(ownerDir, lobby);
    if (await populated(dir)) {
      ended++;
      await killCgroup(dir);
      await drainCgroup(dir, 5_000);
    }
    await removeCgroup(dir);
  }
  await removeOwnerDir(ownerDir);
  return ended;
}
