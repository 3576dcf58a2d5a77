// Acceptance (issue 31, items 1 and 2) on the real `gamehost emulator serve --run`: a lobby's server gets its lobby's
// environment, a short allow-list of the host's and the names --pass-env adds, and nothing else of serve's (its
// admin token, signing secret and database URL set in serve's environment, the database in use). And every process
// of a lobby is contained (Linux, a cgroup per lobby): a double-forking setsid'd server and a bounded fork bomb
// leave nothing after a lobby stop, serve's SIGTERM, kill -9 and a restart, kill -9 and `emulator reset`; checked
// through /proc (no process whose environment holds the lobby id or whose cgroup is the lobby's).
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { logLines, until } from '../helpers/lobby-server.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { replicaEnv, serve, stopReplica, type Replica } from '../helpers/replica.js';
import { runBin } from '../helpers/bin.js';
import { Cgroups } from '../../src/emulator/runtime/cgroup.js';
import { isCI } from '../../src/output/ci.js';

const POSIX = process.platform !== 'win32';
const replicas: Replica[] = [];
afterAll(() => Promise.all(replicas.map(stopReplica)), 30_000);

/** A lobby made through the real CLI on `r` (its server started by serve); its id. */
async function createLobby(r: Replica): Promise<string> {
  const out = await runBin(['lobby', 'create', '--game-mode', 'default', '--json'], replicaEnv(tempDir(), r));
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout).lobby.lobby_id;
}

describe.skipIf(!POSIX || !PG_PRESENT)("a lobby's server and serve's environment", () => {
  it("gets its lobby's variables, the allow-list and --pass-env's names; none of serve's secrets nor anything else", { timeout: 60_000 }, async () => {
    const secrets = {
      GAMEHOST_EMULATOR_ADMIN_TOKEN: randomBytes(32).toString('hex'),
      GAMEHOST_EMULATOR_SECRET: randomBytes(32).toString('hex'),
      GAMEHOST_EMULATOR_DATABASE_URL: await createTestDatabase(),
    };
    const r = await serve(['--run', 'env; echo END; exec sleep 300', '--pass-env', 'GAME_ASSETS', '--data-dir', tempDir()], {
      ...secrets,
      GAME_ASSETS: '/srv/assets',
      DEVELOPER_CLOUD_KEY: 'not-for-servers',
      LC_ALL: 'C.UTF-8',
      TZ: 'Europe/Paris',
      TMPDIR: '/tmp',
    });
    replicas.push(r);
    expect(r.info.stores.records).toBe('postgres');
    const lobbyId = await createLobby(r);
    const lines = await until('the server\'s environment', async () => {
      const got = await logLines(r, lobbyId, 'std_out');
      return got.includes('END') ? got.slice(0, got.indexOf('END')) : undefined;
    });
    const env = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(env).toMatchObject({ RIVET_LOBBY_ID: lobbyId, RIVET_API_ENDPOINT: r.info.endpoint, GAME_ASSETS: '/srv/assets', LC_ALL: 'C.UTF-8', TZ: 'Europe/Paris', TMPDIR: '/tmp' });
    expect(env.PATH).toBe(process.env.PATH);
    expect(env.PORT_default).toMatch(/^\d+$/);
    // What is not the lobby's is the allow-list's, or what the shell sets itself (PWD; SHLVL and `_` in some shells).
    const others = Object.keys(env).filter((name) => !/^(RIVET|PORT)_/.test(name) && !['PWD', 'SHLVL', '_'].includes(name));
    expect(others.sort()).toEqual(['GAME_ASSETS', 'HOME', 'LC_ALL', 'PATH', 'TMPDIR', 'TZ']);
    // Nowhere in what it printed: serve's secrets, whatever the name.
    const printed = lines.join('\n');
    for (const value of [...Object.values(secrets), 'not-for-servers']) expect(printed).not.toContain(value);
    expect(printed).not.toContain(`:${new URL(secrets.GAMEHOST_EMULATOR_DATABASE_URL).password}@`);
  });

  it('--pass-env refuses serve\'s own names and the lobby\'s in one line, before anything starts', async () => {
    for (const [name, why] of [
      ['GAMEHOST_EMULATOR_SECRET', "GAMEHOST_EMULATOR_SECRET is the emulator's own: a server never gets GAMEHOST_* variables"],
      ['RIVET_TOKEN', "RIVET_TOKEN is the lobby's to set: a server gets its lobby's RIVET_* and PORT_* variables"],
      ['1X', '"1X" is not a variable name (letters, digits and _, not starting with a digit)'],
    ]) {
      const dataDir = tempDir();
      const out = await runBin(['emulator', 'serve', '--port', '0', '--run', 'true', '--pass-env', name!, '--data-dir', dataDir]);
      expect(out.code).toBe(2);
      expect(out.stdout).toBe('');
      expect(out.stderr).toBe(`error: --pass-env: ${why}\n`);
    }
    const manual = await runBin(['emulator', 'serve', '--port', '0', '--pass-env', 'GAME_ASSETS', '--data-dir', tempDir()]);
    expect(manual.code).toBe(2);
    expect(manual.stderr).toBe("error: --pass-env goes with what runs lobbies' servers: --run or --run-build\n");
  });
});

/** Whether this machine lets the emulator make cgroups (Linux, root or a delegated subtree): else these tests skip, and fail under CI. */
async function cgroupsHere(): Promise<boolean> {
  if (process.platform !== 'linux') return false;
  const made = await Cgroups.open({ replica: 'test-probe', owner: { pid: process.pid, start: Date.now() }, limits: { memory: 1 << 30, pids: 64 } });
  await made?.close();
  if (made === undefined && isCI(process.env)) throw new Error('the containment tests need cgroups this process may make (root, or a delegated subtree); in CI they must be there');
  if (made === undefined) console.warn('containment tests skipped: no cgroup this process may make');
  return made !== undefined;
}
const CGROUPS = await cgroupsHere();

/** The running processes of a lobby, by /proc: its id in their environment, or in their cgroup's path. */
function lobbyProcesses(lobbyId: string): number[] {
  const found: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z') continue;
      const environ = fs.readFileSync(`/proc/${entry}/environ`);
      if (environ.includes(`RIVET_LOBBY_ID=${lobbyId}\0`) || fs.readFileSync(`/proc/${entry}/cgroup`, 'utf8').includes(`/${lobbyId}\n`)) found.push(Number(entry));
    } catch {
      // Gone meanwhile.
    }
  }
  return found;
}

// Per game mode: `default` double-forks (a grandchild in a session of its own, its parent gone); `duos` is a fork
// bomb, bounded: 50 setsid'd children that each start two more; `squads` is a shell whose child ignores SIGTERM and
// finishes 2 s after the parent has gone.
const SERVER = [
  'case "$RIVET_GAME_MODE_NAME" in',
  `default) setsid sh -c 'sleep 300 & exit 0'; echo started; exec sleep 300 ;;`,
  `duos) i=0; while [ $i -lt 50 ]; do setsid sh -c 'sleep 300 & sleep 300' & i=$((i+1)); done; echo started; wait ;;`,
  `squads) case "$RIVET_LOBBY_CONFIG" in *exit*) (trap '' TERM; exec sleep 300) & exit 3 ;; esac`,
  `  (trap '' TERM; echo started; sleep 2; touch "$TMPDIR/drained-$RIVET_LOBBY_ID") & wait ;;`,
  'esac',
].join('\n');
// Processes each mode has once it is all there: the group leader and what it started.
const EXPECTED: Record<string, number> = { default: 2, duos: 151, squads: 3 };

describe.skipIf(!CGROUPS)('every process of a lobby is contained', () => {
  // The servers' TMPDIR (passed on by the allow-list), where `squads` says it finished.
  const tmp = tempDir();
  async function serveContained(dataDir: string): Promise<Replica> {
    const r = await serve(['--run', SERVER, '--data-dir', dataDir], { TMPDIR: tmp });
    replicas.push(r);
    return r;
  }

  /** A lobby of `mode` made through the real CLI, once all its processes are there. */
  async function running(r: Replica, mode: string): Promise<string> {
    const out = await runBin(['lobby', 'create', '--game-mode', mode, '--json'], replicaEnv(tempDir(), r));
    expect(out.code, out.stderr).toBe(0);
    const lobbyId: string = JSON.parse(out.stdout).lobby.lobby_id;
    await until(`lobby ${mode}'s processes`, async () => (lobbyProcesses(lobbyId).length >= EXPECTED[mode]! ? true : undefined));
    return lobbyId;
  }

  async function killed(r: Replica): Promise<void> {
    r.child.kill('SIGKILL');
    await r.exit;
  }

  it('a lobby stop ends all of it before it answers, setsid\'d and forked alike; the tier\'s limits are on its cgroup', { timeout: 60_000 }, async () => {
    const r = await serveContained(tempDir());
    const lobbies = [await running(r, 'default'), await running(r, 'duos')];
    // The limits of basic-1d1, in the cgroup files of the server's hierarchies (memory.max or memory.limit_in_bytes).
    const leader = lobbyProcesses(lobbies[0]!).sort((a, b) => a - b)[0]!;
    const dirs = fs.readFileSync(`/proc/${leader}/cgroup`, 'utf8').trim().split('\n').filter((l) => l.includes(lobbies[0]!));
    const files = dirs.flatMap((l) => {
      const [, controllers, path] = l.split(':') as [string, string, string];
      const root = controllers === '' ? '/sys/fs/cgroup/unified' : `/sys/fs/cgroup/${controllers}`;
      return ['memory.max', 'memory.limit_in_bytes', 'pids.max'].map((f) => `${root}${path}/${f}`).filter((f) => fs.existsSync(f));
    });
    const limits = Object.fromEntries(files.map((f) => [f.slice(f.lastIndexOf('/') + 1), fs.readFileSync(f, 'utf8').trim()]));
    expect(limits).toMatchObject({ 'pids.max': '512' });
    expect(limits['memory.max'] ?? limits['memory.limit_in_bytes']).toBe(String(2757 * 1024 * 1024));
    for (const lobbyId of lobbies) {
      const out = await runBin(['lobby', 'stop', lobbyId], replicaEnv(tempDir(), r));
      expect(out.code, out.stderr).toBe(0);
      expect(lobbyProcesses(lobbyId)).toEqual([]);
    }
  });

  it('a stop waits for a child that outlives its shell; a server that exits leaves nothing when its lobby is recorded stopped', { timeout: 60_000 }, async () => {
    const r = await serveContained(tempDir());
    const lobbyId = await running(r, 'squads');
    const out = await runBin(['lobby', 'stop', lobbyId], replicaEnv(tempDir(), r));
    expect(out.code, out.stderr).toBe(0);
    // The shell ended on SIGTERM at once; the stop answered only once its child had finished its 2 s (not killed).
    expect(lobbyProcesses(lobbyId)).toEqual([]);
    expect(fs.existsSync(`${tmp}/drained-${lobbyId}`)).toBe(true);

    // A shell that exits 3 at once, its child (ignoring SIGTERM) still running: the lobby is recorded stopped
    // (failed, exit 3) only once the child is gone too.
    const env = replicaEnv(tempDir(), r);
    const created = await runBin(['lobby', 'create', '--game-mode', 'squads', '--config', '{"exit":true}', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    const exiting: string = JSON.parse(created.stdout).lobby.lobby_id;
    const stopped = await until('the lobby recorded stopped', async () => {
      const out = await runBin(['lobby', 'logs', exiting, '--json', '-n', '0'], env);
      expect(out.code, out.stderr).toBe(0);
      const seen = lobbyProcesses(exiting);
      return JSON.parse(out.stdout).lobby.status.stopped ? { status: JSON.parse(out.stdout).lobby.status.stopped, seen } : undefined;
    });
    expect(stopped.status).toMatchObject({ exit_code: 3, failed: true });
    expect(stopped.seen).toEqual([]);
  });

  it("serve's SIGTERM ends every lobby's processes", { timeout: 60_000 }, async () => {
    const r = await serveContained(tempDir());
    const lobbies = [await running(r, 'default'), await running(r, 'duos')];
    r.child.kill('SIGTERM');
    expect(await r.exit).toEqual({ code: 0, signal: null });
    for (const lobbyId of lobbies) expect(lobbyProcesses(lobbyId)).toEqual([]);
  });

  it('after kill -9, the next serve on the data directory ends what its predecessor left, before it serves', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    const first = await serveContained(dataDir);
    const lobbies = [await running(first, 'default'), await running(first, 'duos')];
    await killed(first);
    // Left running by the dead serve: the double fork's grandchild, the bomb's 150.
    expect(lobbies.map((id) => lobbyProcesses(id).length)).toEqual([2, 151]);
    const second = await serveContained(dataDir);
    for (const lobbyId of lobbies) expect(lobbyProcesses(lobbyId)).toEqual([]);
    expect(second.stderr()).toContain('[emulator] ended 2 servers that an emulator of this data directory left running when it was killed\n');
  });

  it('after kill -9, emulator reset ends what serve left, then deletes the data', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    const r = await serveContained(dataDir);
    const lobbies = [await running(r, 'default'), await running(r, 'duos')];
    await killed(r);
    const reset = await runBin(['emulator', 'reset', '--yes', '--data-dir', dataDir]);
    expect(reset.code, reset.stderr).toBe(0);
    expect(reset.stderr).toContain('Ended 2 lobby servers that a killed emulator serve left running.\n');
    for (const lobbyId of lobbies) expect(lobbyProcesses(lobbyId)).toEqual([]);
    expect(fs.existsSync(dataDir)).toBe(false);
  });
});
