// Readiness `run`: the emulator starts each new lobby's server itself (the game server fixture, a real process on
// the official SDK), the lobby is ready when it calls ready, its output comes back through the logs routes, its exit
// stops the lobby, and a stopped lobby's (or a closing emulator's) server goes with its whole process tree.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, NAMESPACE_ID, startEmulator } from '../../src/emulator/index.js';
import { isRunning } from '../../src/emulator/runtime/process.js';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { say, until } from '../helpers/lobby-server.js';
import { createTestDatabase, PG_PRESENT, queryDatabase } from '../helpers/postgres.js';
import { BIN } from '../helpers/bin.js';
import { callAt, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const POSIX = process.platform !== 'win32';
const FIXTURE = fileURLToPath(new URL('../fixtures/game-server.mjs', import.meta.url));
const SERVER = `GAME_SERVER_CHILD=1 "${process.execPath}" "${FIXTURE}"`;
const CONFIG = { startDelayMs: 0, readyDelayMs: 0, run: SERVER };
// Real processes started and stopped: seconds of work on a busy machine.
const SLOW_RUN = { timeout: 60_000 };

async function logLines(endpoint: string, cloudToken: string, lobbyId: string): Promise<string[]> {
  const res = await callAt(endpoint, 'GET', `/cloud/games/${GAME_ID}/matchmaker/lobbies/${lobbyId}/logs?stream=std_out`, { token: cloudToken });
  return (res.json?.lines ?? []).map((l: string) => Buffer.from(l, 'base64').toString());
}

/** The fixture's `pids <server> <child>` line, once it printed it. */
async function pidsOf(endpoint: string, cloudToken: string, lobbyId: string): Promise<[number, number]> {
  return until('the server\'s pids line', async () => {
    const line = (await logLines(endpoint, cloudToken, lobbyId)).find((l) => l.startsWith('pids '));
    return line === undefined ? undefined : (line.split(' ').slice(1).map(Number) as [number, number]);
  });
}

async function lobbyOf(endpoint: string, cloudToken: string, lobbyId: string): Promise<any> {
  return (await callAt(endpoint, 'GET', `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies/${lobbyId}`, { token: cloudToken })).json;
}

describe.skipIf(!POSIX)('readiness run: lobbies whose servers the emulator runs', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator(CONFIG, { runtime: { sampleEveryMs: 50, stopGraceMs: 300 } });
  });
  afterAll(async () => {
    await t.stop();
  });

  it("find answers once the server it started calls ready; the server's line comes back through the logs route; it admits the player", async () => {
    const found = await t.call('POST', '/matchmaker/lobbies/find', { token: t.tokens.public, body: { game_modes: ['default'] } });
    expect(found.status).toBe(200);
    const lobbyId = found.json.lobby.lobby_id;
    const lobby = await lobbyOf(t.endpoint, t.tokens.cloud, lobbyId);
    expect(lobby.lobby.ready_ts).toBeDefined();
    expect(await until('the ready line', async () => ((await logLines(t.endpoint, t.tokens.cloud, lobbyId)).includes('ready') ? true : undefined))).toBe(true);
    expect(await say(found.json.ports.default.port, found.json.player.token)).toBe('ok');
    await t.call('POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: {} });
  });

  it('the server exiting stops its lobby with its exit code, failed', async () => {
    const created = await t.call('POST', '/matchmaker/lobbies/create', { token: t.tokens.public, body: { game_mode: 'default' } });
    expect(created.status).toBe(200);
    const lobbyId = created.json.lobby.lobby_id;
    const [server, child] = await pidsOf(t.endpoint, t.tokens.cloud, lobbyId);
    await until('the ready line', async () => ((await logLines(t.endpoint, t.tokens.cloud, lobbyId)).includes('ready') ? true : undefined));
    expect(await say(created.json.lobby.ports.default.port, 'exit 3')).toBe('');
    const stopped = await until('the lobby stopped', async () => (await lobbyOf(t.endpoint, t.tokens.cloud, lobbyId)).lobby.status.stopped ?? undefined);
    expect(stopped).toMatchObject({ exit_code: 3, failed: true });
    // What it started went with it.
    await until('its child gone', async () => (isRunning(child) ? undefined : true));
    expect(isRunning(server)).toBe(false);
  });

  it('a server killed by a signal stops its lobby with 128 + its number, failed', async () => {
    const created = await t.call('POST', '/matchmaker/lobbies/create', { token: t.tokens.public, body: { game_mode: 'default' } });
    const lobbyId = created.json.lobby.lobby_id;
    const [server, child] = await pidsOf(t.endpoint, t.tokens.cloud, lobbyId);
    process.kill(server, 'SIGKILL');
    const stopped = await until('the lobby stopped', async () => (await lobbyOf(t.endpoint, t.tokens.cloud, lobbyId)).lobby.status.stopped ?? undefined);
    expect(stopped).toMatchObject({ exit_code: 137, failed: true });
    await until('its child gone', async () => (isRunning(child) ? undefined : true));
  });

  it('emulator lobby stop ends the whole tree (a child ignoring SIGTERM too); the metrics are its samples', async () => {
    const created = await t.call('POST', '/matchmaker/lobbies/create', { token: t.tokens.public, body: { game_mode: 'default' } });
    const lobbyId = created.json.lobby.lobby_id;
    const [server, child] = await pidsOf(t.endpoint, t.tokens.cloud, lobbyId);
    expect(isRunning(child)).toBe(true);
    await until('a sample', async () => ((t.services.lobbies.runner?.samples(lobbyId)?.length ?? 0) > 0 ? true : undefined));
    // The runner's samples, read at every turn of the event loop until it lets go of them as the server ends: the
    // last read holds the newest sample taken before the end. (One read before the stop was 30 samples of 50 ms old
    // by the end of a stop that a loaded machine made last 1.5 s, no longer among the lobby's last 30.)
    let sampled = t.services.lobbies.runner!.samples(lobbyId)!;
    const watched = (async () => {
      for (;;) {
        const now = t.services.lobbies.runner!.samples(lobbyId);
        if (now === undefined) return;
        sampled = now;
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const r = await runCli(['emulator', 'lobby', 'stop', lobbyId, '--json'], { env: { ...isolatedEnv(), GAMEHOST_ENDPOINT: t.endpoint } });
    await watched;
    expect(r.code).toBe(0);
    // The stop answers once nothing of the tree is left.
    expect(isRunning(server)).toBe(false);
    expect(isRunning(child)).toBe(false);
    const lobby = await lobbyOf(t.endpoint, t.tokens.cloud, lobbyId);
    expect(lobby.lobby.status.stopped).toMatchObject({ exit_code: 0, failed: false });
    // Its samples, kept in the store once it ended (the runner has none left): the last 30, the newest taken before
    // the end among them, and no more once it ended.
    expect(t.services.lobbies.runner!.samples(lobbyId)).toBeUndefined();
    expect(lobby.metrics.memory.length).toBeGreaterThan(0);
    expect(lobby.metrics.memory.length).toBeLessThanOrEqual(30);
    expect(lobby.metrics.memory).toContain(Math.round(sampled.at(-1)!.memory));
    await new Promise((r) => setTimeout(r, 200));
    expect((await lobbyOf(t.endpoint, t.tokens.cloud, lobbyId)).metrics).toEqual(lobby.metrics);
  });

  it('a lobby\'s folder in the data directory goes with its server when the server wrote nothing there, stays when it did; an emulator starting removes the empty ones of stopped lobbies', async () => {
    const workRoot = path.join(t.dataDir, 'lobbies');
    const start = async () => {
      const created = await t.call('POST', '/matchmaker/lobbies/create', { token: t.tokens.public, body: { game_mode: 'default' } });
      const lobbyId: string = created.json.lobby.lobby_id;
      await pidsOf(t.endpoint, t.tokens.cloud, lobbyId);
      expect(fs.statSync(path.join(workRoot, lobbyId)).isDirectory()).toBe(true);
      return lobbyId;
    };
    const empty = await start();
    const written = await start();
    fs.writeFileSync(path.join(workRoot, written, 'save.dat'), 'a save');
    const running = await start();
    // The stop answers once the server exited: its empty folder is gone by then.
    for (const id of [empty, written]) await t.call('POST', `/_emulator/lobbies/${id}/stop`, { body: {} });
    expect(fs.existsSync(path.join(workRoot, empty))).toBe(false);
    expect(fs.readFileSync(path.join(workRoot, written, 'save.dat'), 'utf8')).toBe('a save');
    // What an emulator killed before its servers' exits leaves: empty folders of stopped (or unknown) lobbies.
    fs.mkdirSync(path.join(workRoot, empty));
    fs.mkdirSync(path.join(workRoot, '00000000-0000-4000-8000-000000000001'));
    const next = await startEmulator({ dataDir: t.dataDir, config: CONFIG });
    try {
      // The running lobby's folder is not asked about here: the second emulator has the first's replica id (one
      // data directory), and its sweep may take that lobby, whose server it does not run, for one it lost.
      const left = fs.readdirSync(workRoot);
      expect(left).toContain(written);
      expect(left).not.toContain(empty);
      expect(left).not.toContain('00000000-0000-4000-8000-000000000001');
    } finally {
      await next.close();
    }
    await t.call('POST', `/_emulator/lobbies/${running}/stop`, { body: {} });
    expect(fs.readdirSync(workRoot)).toEqual([written]);
  });

  it('a lobby stopped through another instance on the same store: its server is found and stopped on the sweep', async () => {
    const created = await t.call('POST', '/matchmaker/lobbies/create', { token: t.tokens.public, body: { game_mode: 'default' } });
    const lobbyId = created.json.lobby.lobby_id;
    const [server, child] = await pidsOf(t.endpoint, t.tokens.cloud, lobbyId);
    const other = await startEmulator({ dataDir: t.dataDir, config: { startDelayMs: 0, readyDelayMs: 0 } });
    try {
      const stopped = await callAt(other.endpoint, 'POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: { exit_code: 2 } });
      expect(stopped.status).toBe(200);
      await until('its server gone', async () => (isRunning(server) || isRunning(child) ? undefined : true));
      // The first stop stays: the server's own exit does not overwrite it.
      expect((await lobbyOf(t.endpoint, t.tokens.cloud, lobbyId)).lobby.status.stopped).toMatchObject({ exit_code: 2, failed: true });
    } finally {
      await other.close();
    }
  });

  it('a server that does not call ready within the ready window: its lobby stops, failed, and the server goes', async () => {
    const mine = await startTestEmulator({ ...CONFIG, run: 'echo "pid $$"; exec sleep 1000', readyWindowMs: 300 });
    try {
      const created = await mine.call('POST', '/matchmaker/lobbies/create', { token: mine.tokens.public, body: { game_mode: 'default' } });
      const lobbyId = created.json.lobby.lobby_id;
      const pid = await until('the pid line', async () => {
        const line = (await logLines(mine.endpoint, mine.tokens.cloud, lobbyId)).find((l) => l.startsWith('pid '));
        return line === undefined ? undefined : Number(line.slice(4));
      });
      await until('the server gone', async () => (isRunning(pid) ? undefined : true));
      expect((await lobbyOf(mine.endpoint, mine.tokens.cloud, lobbyId)).lobby.status.stopped).toMatchObject({ failed: true });
    } finally {
      await mine.stop();
    }
  });

  it('at most maxRunningLobbies servers at once, however many creates come together; a find that would start one more is refused, one a running lobby takes is not; a stopped one frees its place', SLOW_RUN, async () => {
    const mine = await startTestEmulator({ ...CONFIG, run: 'exec sleep 1000', maxRunningLobbies: 2 }, { runtime: { stopGraceMs: 300 } });
    try {
      const create = () => mine.call('POST', '/matchmaker/lobbies/create', { token: mine.tokens.public, body: { game_mode: 'default' } });
      const answers = await Promise.all(Array.from({ length: 6 }, create));
      const ok = answers.filter((a) => a.status === 200);
      expect(ok).toHaveLength(2);
      for (const refused of answers.filter((a) => a.status !== 200)) {
        expect(refused.status).toBe(400);
        expect(refused.json).toMatchObject({
          code: 'MATCHMAKER_TOO_MANY_LOBBIES',
          message: "Too many lobbies: this emulator runs 2 lobbies' servers already (maxRunningLobbies).",
        });
      }
      // A find that would create one more is refused the same way, at once (it does not wait for a lobby).
      const found = await mine.call('POST', '/matchmaker/lobbies/find', { token: mine.tokens.public, body: { game_modes: ['default'], tags: { fresh: '1' } } });
      expect(found.json.code).toBe('MATCHMAKER_TOO_MANY_LOBBIES');
      // One that a running lobby takes is not: the bound is of servers, not of players.
      for (const a of ok) await mine.services.lobbyCalls.ready({ mode: 'lobby', game: mine.services.games.seeded, lobbyId: a.json.lobby.lobby_id });
      const joins = await mine.call('POST', '/matchmaker/lobbies/find', { token: mine.tokens.public, body: { game_modes: ['default'] } });
      expect(joins.status).toBe(200);
      expect(ok.map((a) => a.json.lobby.lobby_id)).toContain(joins.json.lobby.lobby_id);
      // Only the two lobbies are in the store: the refused ones wrote nothing.
      const listed = await mine.call('GET', `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies`, { token: mine.tokens.cloud });
      const running = listed.json.lobbies;
      expect(running.map((l: any) => l.lobby_id).sort()).toEqual(ok.map((a) => a.json.lobby.lobby_id).sort());
      await mine.call('POST', `/_emulator/lobbies/${ok[0]!.json.lobby.lobby_id}/stop`, { body: {} });
      expect((await create()).status).toBe(200);
      expect((await create()).json.code).toBe('MATCHMAKER_TOO_MANY_LOBBIES');
    } finally {
      await mine.stop();
    }
  });

  it("a game mode's own command and ports: free ports of their protocols in its server's environment and in the answers, a range as given", SLOW_RUN, async () => {
    const ready = path.join(tempDir(), 'ready.mjs');
    fs.writeFileSync(
      ready,
      "await fetch(process.env.RIVET_API_ENDPOINT + '/matchmaker/lobbies/ready', { method: 'POST', headers: { authorization: 'Bearer ' + process.env.RIVET_TOKEN } });\n" +
        'setInterval(() => {}, 1e9);\n',
    );
    const mine = await startTestEmulator(
      {
        ...CONFIG,
        gameModes: ['default', 'duos'],
        gameModeSettings: {
          duos: {
            run: `echo "ports $PORT_game $PORT_voice $PORT_RANGE_MIN_relay_set $PORT_RANGE_MAX_relay_set \${PORT_default:-none}"; exec "${process.execPath}" "${ready}"`,
            ports: { game: { protocol: 'udp' }, voice: { protocol: 'tcp' }, 'relay-set': { protocol: 'udp', range: { min: 26000, max: 26009 } } },
          },
        },
      },
      { runtime: { stopGraceMs: 300 } },
    );
    try {
      const created = await mine.call('POST', '/matchmaker/lobbies/create', { token: mine.tokens.public, body: { game_mode: 'duos' } });
      expect(created.status).toBe(200);
      const { ports, lobby_id: lobbyId } = created.json.lobby;
      expect(Object.keys(ports).sort()).toEqual(['game', 'relay-set', 'voice']);
      expect(ports['relay-set']).toEqual({ hostname: '127.0.0.1', port_range: { min: 26000, max: 26009 }, is_tls: false });
      const game = ports.game.port;
      const voice = ports.voice.port;
      expect(game).not.toBe(voice);
      const line = await until('the ports line', async () => (await logLines(mine.endpoint, mine.tokens.cloud, lobbyId)).find((l) => l.startsWith('ports ')));
      expect(line).toBe(`ports ${game} ${voice} 26000 26009 none`);
      // Ports that were free on this host: nothing else holds them (the server here binds none).
      const udp = (await import('node:dgram')).createSocket('udp4');
      await new Promise<void>((resolve, reject) => udp.once('error', reject).bind(game, '127.0.0.1', resolve));
      udp.close();
      const tcp = net.createServer();
      await new Promise<void>((resolve, reject) => tcp.once('error', reject).listen(voice, '127.0.0.1', resolve));
      await new Promise((resolve) => tcp.close(resolve));
      // Find and join in that game mode answer the same ports (its server called ready).
      const found = await mine.call('POST', '/matchmaker/lobbies/find', { token: mine.tokens.public, body: { game_modes: ['duos'] } });
      expect(found.json.lobby).toMatchObject({ lobby_id: lobbyId, ports });
      const joined = await mine.call('POST', '/matchmaker/lobbies/join', { token: mine.tokens.public, body: { lobby_id: lobbyId } });
      expect(joined.json.lobby).toMatchObject({ lobby_id: lobbyId, ports });
      // A lobby of another game mode keeps the default ports and `run`.
      const other = await mine.call('POST', '/matchmaker/lobbies/create', { token: mine.tokens.public, body: { game_mode: 'default' } });
      expect(Object.keys(other.json.lobby.ports).sort()).toEqual(['default', 'game-range']);
    } finally {
      await mine.stop();
    }
  });

  it('once its last server stopped and none started for the idle wait, the emulator collects its garbage, once; a start in the wait puts it off', SLOW_RUN, async () => {
    const collected: number[] = [];
    const IDLE_MS = 400;
    const mine = await startTestEmulator(CONFIG, { runtime: { stopGraceMs: 300, idleCollectMs: IDLE_MS, collect: () => collected.push(Date.now()) } });
    try {
      const create = async () => (await mine.call('POST', '/matchmaker/lobbies/create', { token: mine.tokens.public, body: { game_mode: 'default' } })).json.lobby.lobby_id as string;
      const stop = (id: string) => mine.call('POST', `/_emulator/lobbies/${id}/stop`, { body: {} });
      // Nothing ran yet: nothing to give back.
      await sleep(IDLE_MS * 2);
      expect(collected).toEqual([]);
      // Two servers; the first stops, the second runs on through the wait: no collection.
      const [a, b] = [await create(), await create()];
      await pidsOf(mine.endpoint, mine.tokens.cloud, b);
      await stop(a);
      await sleep(IDLE_MS * 2);
      expect(collected).toEqual([]);
      // The last stops, and another starts within the wait: still none.
      await stop(b);
      const c = await create();
      await sleep(IDLE_MS * 2);
      expect(collected).toEqual([]);
      // It stops, and nothing starts: one collection, the wait after its server's exit (which comes before the stop
      // answers: that waits for the whole tree, a child ignoring SIGTERM killed after the grace period).
      const stoppedAt = Date.now();
      await stop(c);
      await until('the idle collection', async () => (collected.length > 0 ? true : undefined), 10_000);
      expect(collected[0]! - stoppedAt).toBeGreaterThanOrEqual(IDLE_MS - 50);
      await sleep(IDLE_MS * 2);
      expect(collected).toHaveLength(1);
    } finally {
      await mine.stop();
    }
  });

  it("closing the emulator stops its lobbies' servers and records the lobbies stopped", async () => {
    const dataDir = tempDir();
    const mine = await startTestEmulator(CONFIG, { dataDir, runtime: { stopGraceMs: 300 } });
    const created = await mine.call('POST', '/matchmaker/lobbies/create', { token: mine.tokens.public, body: { game_mode: 'default' } });
    const lobbyId = created.json.lobby.lobby_id;
    const [server, child] = await pidsOf(mine.endpoint, mine.tokens.cloud, lobbyId);
    await mine.close();
    expect(isRunning(server)).toBe(false);
    expect(isRunning(child)).toBe(false);
    // Opened again (servers off), the lobby is stopped.
    const again = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { dataDir });
    try {
      expect((await lobbyOf(again.endpoint, again.tokens.cloud, lobbyId)).lobby.status.stopped).toBeDefined();
    } finally {
      await again.stop();
    }
  });
});

describe.skipIf(!POSIX)('gamehost emulator serve --run', () => {
  it('starts a lobby\'s server; SIGTERM stops it with its tree, nothing left behind', async () => {
    const env = isolatedEnv();
    const dataDir = tempDir();
    const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--data-dir', dataDir, '--run', SERVER], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const info = JSON.parse(await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout! }).once('line', resolve)));
      const found = await callAt(info.endpoint, 'POST', '/matchmaker/lobbies/find', { token: info.tokens.public, body: { game_modes: ['default'] } });
      expect(found.status).toBe(200);
      const [server, grandchild] = await pidsOf(info.endpoint, info.tokens.cloud, found.json.lobby.lobby_id);
      expect(isRunning(grandchild)).toBe(true);
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      expect(isRunning(server)).toBe(false);
      expect(isRunning(grandchild)).toBe(false);
    } finally {
      child.kill('SIGKILL');
    }
  });
});

/** A real `emulator serve --run` on `args`, its --json start line read. */
async function serveRun(args: string[]): Promise<{ info: any; child: ReturnType<typeof spawn>; exited: Promise<number | null>; stderr: () => string }> {
  const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--run', SERVER, ...args], {
    env: { PATH: process.env.PATH, ...isolatedEnv() },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', resolve);
    void exited.then((code) => reject(new Error(`serve exited ${code}: ${err}`)));
  });
  return { info: JSON.parse(line), child, exited, stderr: () => err };
}

const STORES: [string, boolean, () => Promise<string[]>][] = [
  ['SQLite', true, async () => []],
  ['PostgreSQL', PG_PRESENT, async () => ['--database', await createTestDatabase()]],
];

describe.skipIf(!POSIX).each(STORES)('emulator serve --run killed (SIGKILL) and started again, on %s', (_name, present, storeArgs) => {
  it.skipIf(!present)("kills what its predecessor's servers left running and records their lobbies stopped, failed (137)", SLOW_RUN, async () => {
    const dataDir = tempDir();
    const args = ['--data-dir', dataDir, ...(await storeArgs())];
    const first = await serveRun(args);
    let server = 0;
    let grandchild = 0;
    try {
      const found = await callAt(first.info.endpoint, 'POST', '/matchmaker/lobbies/find', { token: first.info.tokens.public, body: { game_modes: ['default'] } });
      expect(found.status).toBe(200);
      const lobbyId = found.json.lobby.lobby_id;
      [server, grandchild] = await pidsOf(first.info.endpoint, first.info.tokens.cloud, lobbyId);
      first.child.kill('SIGKILL');
      await first.exited;
      // Orphaned: nobody stopped them.
      expect(isRunning(server)).toBe(true);
      expect(isRunning(grandchild)).toBe(true);

      const second = await serveRun(args);
      try {
        // Done before it serves: nothing of the old tree is left, and the lobby is stopped.
        expect(isRunning(server)).toBe(false);
        expect(isRunning(grandchild)).toBe(false);
        expect((await lobbyOf(second.info.endpoint, second.info.tokens.cloud, lobbyId)).lobby.status.stopped).toMatchObject({ exit_code: 137, failed: true });
        expect(second.stderr()).toContain('[emulator] stopped 1 lobby whose servers this replica ran before it restarted (exit code 137, failed)');
      } finally {
        second.child.kill('SIGTERM');
        expect(await second.exited).toBe(0);
      }
    } finally {
      first.child.kill('SIGKILL');
      for (const pid of [server, grandchild]) if (pid > 0 && isRunning(pid)) process.kill(pid, 'SIGKILL');
    }
  });
});

describe.skipIf(!POSIX || !PG_PRESENT)('two replicas running lobbies on one PostgreSQL database', () => {
  it("the replica that started a lobby's server owns it; a stop through the other reaches it on its sweep", SLOW_RUN, async () => {
    const url = await createTestDatabase();
    const start = (replica: string) =>
      startEmulator({ dataDir: tempDir(), database: url, config: { ...CONFIG, replica }, runtime: { stopGraceMs: 300 } });
    const a = await start('replica-a');
    const b = await start('replica-b');
    try {
      const created = await callAt(a.endpoint, 'POST', '/matchmaker/lobbies/create', { token: a.tokens.public, body: { game_mode: 'default' } });
      expect(created.status).toBe(200);
      const lobbyId = created.json.lobby.lobby_id;
      const [server, child] = await pidsOf(a.endpoint, a.tokens.cloud, lobbyId);
      const [row] = await queryDatabase(url, 'SELECT owner, owner_pid, server_pid FROM lobbies WHERE lobby_id = $1', [lobbyId]);
      expect(row).toMatchObject({ owner: 'replica-a', owner_pid: process.pid });
      expect(row.server_pid).toBeGreaterThan(0);
      const stopped = await callAt(b.endpoint, 'POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: { exit_code: 4 } });
      expect(stopped.status).toBe(200);
      await until('its server gone', async () => (isRunning(server) || isRunning(child) ? undefined : true));
      expect((await lobbyOf(b.endpoint, b.tokens.cloud, lobbyId)).lobby.status.stopped).toMatchObject({ exit_code: 4, failed: true });
      // B started no server of its own for it.
      expect(b.services.lobbies.runner!.samples(lobbyId)).toBeUndefined();
    } finally {
      await Promise.all([a.close(), b.close()]);
    }
  });
});
