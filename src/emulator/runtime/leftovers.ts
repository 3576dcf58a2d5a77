// What an emulator that dies (SIGKILL, a crash, its machine) leaves running is found again through its data
// directory: each emulator that runs servers keeps a record there, `runs/<pid>-<start>.json`, of where its lobbies'
// cgroups are (its owner directories) and, by lobby, its servers' process-group leaders (pid and start time). A later
// serve on the data directory (before it serves) and `emulator reset` sweep the records whose emulator is gone: each
// cgroup ended and removed, each server's group and tree killed where it had no cgroup, the record deleted. A serve
// that stops cleanly deletes its own.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { ownerOf, ownerPath, readOwnHierarchies, sweepOwnerDir } from './cgroup.js';
import { isSameProcess, killLeftover } from './process.js';

interface RunRecordFile {
  /** The emulator's owner directories, one per cgroup hierarchy it uses (none without cgroups). */
  cgroups: string[];
  /** Its running servers by lobby: the process-group leader's pid and start time. */
  servers: Record<string, { pid: number; start: number }>;
}

const runsDir = (dataDir: string) => join(dataDir, 'runs');

/** This emulator's record in its data directory, rewritten whole (a temporary file renamed) at each change. */
export class RunRecord {
  private readonly file: string;
  private readonly content: RunRecordFile;

  constructor(dataDir: string, owner: { pid: number; start: number }, cgroups: string[]) {
    mkdirSync(runsDir(dataDir), { recursive: true, mode: 0o700 });
    this.file = join(runsDir(dataDir), `${owner.pid}-${owner.start}.json`);
    this.content = { cgroups, servers: {} };
    this.write();
  }

  add(lobbyId: string, pid: number, start: number): void {
    this.content.servers[lobbyId] = { pid, start };
    this.write();
  }

  remove(lobbyId: string): void {
    if (!(lobbyId in this.content.servers)) return;
    delete this.content.servers[lobbyId];
    this.write();
  }

  /** The emulator stopped cleanly, every server with it: nothing left to find. */
  close(): void {
    rmSync(this.file, { force: true });
  }

  private write(): void {
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, JSON.stringify(this.content) + '\n', { mode: 0o600 });
    renameSync(tmp, this.file);
  }
}

/** An owner directory as a record may name one: a cgroup directory ending in gamehost/<replica>/<pid>-<start>. */
function isOwnerDir(dir: string): boolean {
  const parts = dir.split('/');
  return posix.isAbsolute(dir) && parts.length >= 4 && parts.at(-3) === 'gamehost' && ownerOf(parts.at(-1)!) !== undefined && !parts.includes('..');
}

/**
 * Ends what the dead emulators of `dataDir` left running, by their records and (with `replica`) by the owner
 * directories of that replica under this process's own cgroups: a record or directory of an emulator that still
 * runs is left alone. Answers how many servers (lobby cgroups with a process, or process groups) it ended.
 */
export async function sweepLeftovers(dataDir: string, replica?: string): Promise<number> {
  let ended = 0;
  let names: string[] = [];
  try {
    names = readdirSync(runsDir(dataDir)).filter((n) => n.endsWith('.json'));
  } catch {
    // No record: nothing ran here, or it was deleted.
  }
  for (const name of names) {
    const owner = ownerOf(name.slice(0, -'.json'.length));
    if (owner === undefined || (await isSameProcess(owner.pid, owner.start))) continue;
    const file = join(runsDir(dataDir), name);
    let record: Partial<RunRecordFile> = {};
    try {
      record = JSON.parse(readFileSync(file, 'utf8')) as Partial<RunRecordFile>;
    } catch {
      // Half-written or hand-broken: what it named cannot be known; the directory scan below still looks.
    }
    const cgroups = Array.isArray(record.cgroups) ? record.cgroups.filter((d): d is string => typeof d === 'string' && isOwnerDir(d)) : [];
    for (const dir of cgroups) ended += await sweepOwnerDir(dir);
    // Without a cgroup, its servers' groups and trees (only while each pid still is the process that started then).
    if (cgroups.length === 0 && record.servers !== null && typeof record.servers === 'object') {
      for (const s of Object.values(record.servers)) {
        if (Number.isSafeInteger(s?.pid) && s.pid > 0 && Number.isFinite(s.start) && (await killLeftover(s.pid, s.start))) ended++;
      }
    }
    rmSync(file, { force: true });
  }
  if (replica !== undefined) {
    for (const h of readOwnHierarchies()) {
      const replicaDir = join(h.dir, posix.dirname(ownerPath(replica, { pid: 0, start: 0 })));
      let owners: string[] = [];
      try {
        owners = readdirSync(replicaDir);
      } catch {
        continue;
      }
      for (const name of owners) {
        const owner = ownerOf(name);
        if (owner === undefined || (await isSameProcess(owner.pid, owner.start))) continue;
        ended += await sweepOwnerDir(join(replicaDir, name));
      }
    }
  }
  return ended;
}
