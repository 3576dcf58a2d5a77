// The process runner on real processes: output lines, the exit, the environment and working directory, samples of
// the whole tree, and every way of stopping leaving no process of the tree behind (checked by pid).
import fs from 'node:fs';
import path from 'node:path';
import pidusage from 'pidusage';
import { afterAll, describe, expect, it } from 'vitest';
import { checkConfig } from '../../src/emulator/config.js';
import { hostEnvironment, isRunning, killLeftover, processStart, ProcessRunner } from '../../src/emulator/runtime/process.js';
import type { OutputStream, RunningServer } from '../../src/emulator/runtime/runtime.js';
import { RunnerError } from '../../src/emulator/runtime/runtime.js';
import { tempDir } from '../helpers/cli.js';

const POSIX = process.platform !== 'win32';

interface Started {
  server: RunningServer;
  lines: { stream: OutputStream; text: string }[];
  /** Resolves with the first line that matches. */
  line(re: RegExp): Promise<string>;
}

// Every server a test starts, stopped at the end whatever the test did: nothing of a failed test outlives its file.
const started: RunningServer[] = [];
afterAll(async () => {
  await Promise.all(started.splice(0).map((s) => s.stop(0)));
});

async function start(command: string, env: Record<string, string> = {}): Promise<Started> {
  const lines: Started['lines'] = [];
  const waiters: { re: RegExp; resolve: (l: string) => void }[] = [];
  const server = await new ProcessRunner(command).start({
    env: { PATH: process.env.PATH ?? '', ...env },
    workDir: tempDir('gamehost-lobby-'),
    ports: [],
    onLine(stream, line) {
      const text = line.toString();
      lines.push({ stream, text });
      for (const w of waiters.splice(0)) (w.re.test(text) ? w.resolve(text) : waiters.push(w));
    },
  });
  started.push(server);
  return {
    server,
    lines,
    line: (re) => {
      const seen = lines.find((l) => re.test(l.text));
      return seen ? Promise.resolve(seen.text) : new Promise((resolve) => waiters.push({ re, resolve }));
    },
  };
}

/** The pids a command printed as `pid <n>`, once `count` of them arrived. */
async function pids(s: Started, count: number): Promise<number[]> {
  for (let i = 1; i <= count; i++) await s.line(new RegExp(`^pid \\d+ #${i}$`));
  return s.lines.filter((l) => l.text.startsWith('pid ')).map((l) => Number(l.text.split(' ')[1]));
}

describe("a server's share of the host's environment", () => {
  const host = {
    PATH: '/usr/bin', HOME: '/home/dev', LC_ALL: 'C', LC_TIME: 'en_GB', LANG: 'en_US.UTF-8', TZ: 'UTC', TMPDIR: '/tmp',
    GAMEHOST_EMULATOR_SECRET: 's', GAMEHOST_EMULATOR_ADMIN_TOKEN: 't', GAMEHOST_EMULATOR_DATABASE_URL: 'postgres://u:p@h/d',
    AWS_SECRET_ACCESS_KEY: 'k', NODE_OPTIONS: '--inspect', LCX: 'not a locale', Path: 'C:\\Windows', SYSTEMROOT: 'C:\\Windows', ComSpec: 'cmd.exe',
  };

  it('POSIX: the allow-list by exact name, LC_* as a prefix; nothing of the emulator\'s own nor anything else', () => {
    expect(hostEnvironment(host, false)).toEqual({ PATH: '/usr/bin', HOME: '/home/dev', LC_ALL: 'C', LC_TIME: 'en_GB', LANG: 'en_US.UTF-8', TZ: 'UTC', TMPDIR: '/tmp', ComSpec: 'cmd.exe' });
  });

  it('Windows: names whatever their case, as Windows matches them', () => {
    expect(hostEnvironment(host, true)).toMatchObject({ Path: 'C:\\Windows', SYSTEMROOT: 'C:\\Windows', ComSpec: 'cmd.exe', PATH: '/usr/bin' });
    expect(Object.keys(hostEnvironment(host, true)).filter((k) => /GAMEHOST|AWS|NODE|LCX/.test(k))).toEqual([]);
  });

  it('the config\'s passEnv: names only, none of the emulator\'s or the lobby\'s', () => {
    expect(checkConfig({ passEnv: ['GAME_ASSETS', 'GAME_ASSETS', 'AWS_REGION'] }).passEnv).toEqual(['GAME_ASSETS', 'AWS_REGION']);
    expect(() => checkConfig({ passEnv: ['GAMEHOST_EMULATOR_ADMIN_TOKEN'] })).toThrow("passEnv: GAMEHOST_EMULATOR_ADMIN_TOKEN is the emulator's own");
    expect(() => checkConfig({ passEnv: ['PORT_default'] })).toThrow("passEnv: PORT_default is the lobby's to set");
    expect(() => checkConfig({ passEnv: 'GAME_ASSETS' })).toThrow('passEnv must be a list of variable names');
  });
});

describe.skipIf(!POSIX)('the process runner', () => {
  it('runs the command through the shell in its working directory, with the environment given; lines per stream; its exit code', async () => {
    const s = await start('echo "hello $GREETING"; echo "to stderr" >&2; pwd; printf "no newline"; exit 3', { GREETING: 'lobby' });
    expect(await s.server.exited).toEqual({ code: 3, signal: null });
    expect(s.lines.filter((l) => l.stream === 'stdout').map((l) => l.text)).toEqual([
      'hello lobby',
      expect.stringMatching(/gamehost-lobby-/),
      'no newline',
    ]);
    expect(s.lines.filter((l) => l.stream === 'stderr').map((l) => l.text)).toEqual(['to stderr']);
    // Only the environment given: nothing of this process's own.
    const env = await start('echo "home=${HOME:-unset}"');
    await env.server.exited;
    expect(env.lines[0]!.text).toBe('home=unset');
  });

  it('stop: SIGTERM to the whole tree (children, grandchildren, one that left the group); none is left', async () => {
    const s = await start(
      [
        'sleep 300 & echo "pid $! #1"',
        `sh -c 'sleep 300 & echo "pid $! #2"; wait' &`,
        // A child in a session (and group) of its own: still found through its parent.
        `node -e 'const c = require("child_process").spawn("sleep", ["300"], { detached: true, stdio: "ignore" }); setInterval(() => {}, 1000); console.log("pid " + process.pid + " #3\\npid " + c.pid + " #4")' &`,
        'wait',
      ].join('\n'),
    );
    const tree = await pids(s, 4);
    expect(tree).toHaveLength(4);
    expect(tree.every(isRunning)).toBe(true);
    const exit = await s.server.stop(5_000);
    expect(exit).toEqual({ code: null, signal: 'SIGTERM' });
    expect(tree.filter(isRunning)).toEqual([]);
  });

  it('stop: what ignores SIGTERM is killed after the grace period', async () => {
    const s = await start(`trap '' TERM; sleep 300 & echo "pid $! #1"; while :; do sleep 0.05; done`);
    const tree = await pids(s, 1);
    const exit = await s.server.stop(300);
    expect(exit.signal).toBe('SIGKILL');
    expect(tree.filter(isRunning)).toEqual([]);
    // Asking again answers the same exit.
    expect(await s.server.stop(300)).toEqual(exit);
  });

  it('a server that exits by itself takes what it started with it', async () => {
    const s = await start(`sleep 300 & echo "pid $! #1"; sh -c 'sleep 300' & echo "pid $! #2"; exit 0`);
    const tree = await pids(s, 2);
    expect(await s.server.exited).toEqual({ code: 0, signal: null });
    // The exit resolves once the leftovers were sent SIGKILL; the kernel ends them within moments.
    for (let i = 0; i < 100 && tree.some(isRunning); i++) await new Promise((r) => setTimeout(r, 20));
    expect(tree.filter(isRunning)).toEqual([]);
    expect(await s.server.sample()).toBeUndefined();
  });

  it('killLeftover ends a tree only while its pid still is the process that started then (its start time)', async () => {
    const s = await start(`sleep 300 & echo "pid $! #1"; while :; do sleep 0.05; done`);
    const [child] = await pids(s, 1);
    const leader = s.server.pid!;
    const began = (await processStart(leader))!;
    expect(Math.abs(began - Date.now())).toBeLessThan(60_000);
    // Another process given the pid since (another start time): left alone.
    expect(await killLeftover(leader, began - 10_000)).toBe(false);
    expect(isRunning(leader) && isRunning(child!)).toBe(true);
    expect(await killLeftover(leader, began)).toBe(true);
    expect([leader, child].filter((p) => isRunning(p!))).toEqual([]);
    expect(await s.server.exited).toEqual({ code: null, signal: 'SIGKILL' });
    expect(await processStart(leader)).toBeUndefined();
  });

  it.skipIf(process.platform !== 'linux')("reads a process's start time from /proc as pidusage computes it (a start an older serve recorded still matches)", async () => {
    const usage = await pidusage(process.pid);
    const began = (await processStart(process.pid))!;
    expect(Math.abs(began - (usage.timestamp - usage.elapsed))).toBeLessThan(100);
    expect(Math.abs(began - (Date.now() - process.uptime() * 1000))).toBeLessThan(1_000);
  });

  // pidusage keeps a process's /proc/<pid>/stat open between readings; processStart once forgot them (clear())
  // without closing, one descriptor (and every sampled process's) left open for good per lobby started, and two
  // first readings of one process at once left the first one's open.
  it.skipIf(process.platform !== 'linux')('reading a server\'s start time and samples, again and again, holds at most one descriptor of each process', async () => {
    const s = await start(`sleep 300 & echo "pid $! #1"; wait`);
    const [child] = await pids(s, 1);
    const leader = s.server.pid!;
    const heldOf = (pid: number) =>
      fs.readdirSync('/proc/self/fd').filter((fd) => {
        try {
          return fs.readlinkSync(`/proc/self/fd/${fd}`) === `/proc/${pid}/stat`;
        } catch {
          return false;
        }
      }).length;
    // Asked at once, first (a server's start time and its first sample, as it starts): one reading, not two.
    expect((await Promise.all([processStart(leader), processStart(leader)])).every((t) => t !== undefined)).toBe(true);
    for (let i = 0; i < 5; i++) {
      expect(await processStart(leader)).toBeDefined();
      expect(await s.server.sample()).toBeDefined();
    }
    expect(heldOf(leader)).toBe(1);
    expect(heldOf(child!)).toBe(1);
  });

  it('samples the CPU and memory of the whole tree', async () => {
    // A busy child under an idle shell: the CPU is the child's, counted in the tree.
    const s = await start(`node -e 'console.log("pid " + process.pid + " #1"); for (;;) {}' & wait`);
    await pids(s, 1);
    await s.server.sample();
    await new Promise((r) => setTimeout(r, 500));
    const sample = (await s.server.sample())!;
    // Busy all along, so above nothing; how far above depends on what else this machine runs.
    expect(sample.cpu).toBeGreaterThan(0);
    expect(sample.memory).toBeGreaterThan(10 * 1024 * 1024);
    await s.server.stop(1_000);
  });

  it('a command that cannot start is one RunnerError naming it', async () => {
    const gone = path.join(tempDir(), 'missing');
    const err = await new ProcessRunner('true')
      .start({ env: {}, workDir: gone, ports: [], onLine: () => {} })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(RunnerError);
    expect((err as Error).message).toContain(gone);
    expect(fs.existsSync(gone)).toBe(false);
  });
});
