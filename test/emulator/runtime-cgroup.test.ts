// The process runner in a lobby's cgroup, on each kind of hierarchy this machine has, forced one at a time: cgroup
// v2 alone (cgroup.kill, as on most users' machines) and cgroup v1 alone (the freezer, memory and pids
// controllers). A server that setsid's its children is stopped whole; the limits are in the cgroup's files and hold.
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Cgroups, readOwnHierarchies, type Hierarchy } from '../../src/emulator/runtime/cgroup.js';
import { isRunning, ProcessRunner } from '../../src/emulator/runtime/process.js';
import type { RunningServer } from '../../src/emulator/runtime/runtime.js';
import { tempDir } from '../helpers/cli.js';

const all = readOwnHierarchies();
const KINDS: [string, Hierarchy[]][] = [
  ['cgroup v2 alone', all.filter((h) => h.version === 2)],
  ['cgroup v1 alone', all.filter((h) => h.version === 1)],
];
const opened: Cgroups[] = [];
const running: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(running.map((s) => s.stop(0)));
  for (const c of opened) await c.close();
});

let owners = 0;
async function open(hierarchies: Hierarchy[], pids = 64): Promise<Cgroups | undefined> {
  const cgroups = await Cgroups.open({ replica: 'test-runtime-cgroup', owner: { pid: process.pid, start: Date.now() + owners++ }, limits: { memory: 256 * 1024 * 1024, pids }, hierarchies });
  if (cgroups !== undefined) opened.push(cgroups);
  return cgroups;
}

async function start(cgroups: Cgroups, command: string, memory?: number): Promise<{ server: RunningServer; lines: string[]; dirs: string[] }> {
  const lobby = `lobby-${owners++}`;
  const lines: string[] = [];
  const server = await new ProcessRunner(command, cgroups.lobby(lobby, memory === undefined ? {} : { memory })).start({
    env: { PATH: process.env.PATH ?? '' },
    workDir: tempDir('gamehost-lobby-'),
    ports: [],
    onLine: (_stream, line) => lines.push(line.toString()),
  });
  running.push(server);
  return { server, lines, dirs: cgroups.ownerDirs.map((d) => path.join(d, lobby)) };
}

const procsOf = (dir: string) => fs.readFileSync(path.join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);

describe.each(KINDS)('a server in its cgroup, %s', (kind, hierarchies) => {
  it.skipIf(process.platform !== 'linux')('a stop ends its setsid\'d children too, and its cgroup goes; the limits are in its files', async () => {
    const cgroups = await open(hierarchies);
    if (cgroups === undefined) return void console.warn(`${kind}: no cgroup this process may make here`);
    expect(cgroups.describe().kill).toMatch(kind === 'cgroup v2 alone' ? /^cgroup v2, cgroup\.kill/ : /^cgroup v1, freezer/);
    const s = await start(cgroups, `setsid sh -c 'sleep 300 & sleep 300' & sleep 300 & echo ready; wait`);
    for (let i = 0; i < 200 && procsOf(s.dirs[0]!).length < 5; i++) await new Promise((r) => setTimeout(r, 20));
    const pids = procsOf(s.dirs[0]!);
    expect(pids.length).toBe(5);
    const files = s.dirs.flatMap((d) => ['memory.max', 'memory.limit_in_bytes', 'pids.max'].map((f) => path.join(d, f)).filter((f) => fs.existsSync(f)));
    const limits = files.map((f) => `${path.basename(f)}=${fs.readFileSync(f, 'utf8').trim()}`);
    if (kind === 'cgroup v1 alone') expect(limits.sort()).toEqual(['memory.limit_in_bytes=268435456', 'pids.max=64']);
    // A lobby whose version names another tier is held to that tier's memory.
    const tiered = await start(cgroups, 'echo ready; sleep 300', 128 * 1024 * 1024);
    const tieredLimits = tiered.dirs.flatMap((d) => ['memory.max', 'memory.limit_in_bytes'].map((f) => path.join(d, f)).filter((f) => fs.existsSync(f)).map((f) => fs.readFileSync(f, 'utf8').trim()));
    if (kind === 'cgroup v1 alone') expect(tieredLimits).toEqual(['134217728']);
    await tiered.server.stop(2_000);
    const exit = await s.server.stop(2_000);
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(pids.filter(isRunning)).toEqual([]);
    for (const dir of s.dirs) expect(fs.existsSync(dir)).toBe(false);
  });

  it.skipIf(process.platform !== 'linux')('what ignores SIGTERM in a session of its own is killed after the grace; a server that exits takes the rest with it', async () => {
    const cgroups = await open(hierarchies);
    if (cgroups === undefined) return;
    const s = await start(cgroups, `setsid sh -c "trap '' TERM; sleep 300" & trap '' TERM; echo ready; while :; do sleep 0.05; done`);
    for (let i = 0; i < 200 && procsOf(s.dirs[0]!).length < 3; i++) await new Promise((r) => setTimeout(r, 20));
    const pids = procsOf(s.dirs[0]!);
    expect((await s.server.stop(300)).signal).toBe('SIGKILL');
    expect(pids.filter(isRunning)).toEqual([]);

    const quick = await start(cgroups, `setsid sh -c 'sleep 300' & echo ready; sleep 0.2; exit 4`);
    expect(await quick.server.exited).toEqual({ code: 4, signal: null });
    for (const dir of quick.dirs) expect(fs.existsSync(dir)).toBe(false);
  });
});

describe.skipIf(process.platform !== 'linux')('the pids limit', () => {
  it('holds for the whole tree: forks past it fail', async () => {
    const cgroups = await open(all, 20);
    if (cgroups === undefined || !cgroups.describe().limits.includes('pids')) return void console.warn('no pids controller here');
    // It stays after "done" (the sleeps are in sessions of their own, no children to wait for): a server that exits
    // takes its cgroup with it, and the count below reads the cgroup.
    const s = await start(cgroups, `i=0; while [ $i -lt 40 ]; do (setsid sleep 300 &) 2>/dev/null || echo refused; i=$((i+1)); done; echo done; exec sleep 300`);
    for (let i = 0; i < 500 && !s.lines.includes('done'); i++) await new Promise((r) => setTimeout(r, 20));
    expect(s.lines).toContain('done');
    expect(s.lines.filter((l) => l === 'refused').length).toBeGreaterThan(0);
    expect(procsOf(path.join(s.dirs[0]!)).length).toBeLessThanOrEqual(20);
    await s.server.stop(500);
  });
});
