// Acceptance (issue 25), `emulator serve --run`: a game server written only against the official SDK and the
// production environment variables (test/fixtures/game-server.mjs), run by the real `gamehost emulator serve --run`
// for each lobby, plays end to end with an SDK client (RivetClient): find waits for the server's ready, the server
// admits the player once, its printed lines come back through the real `gamehost lobby logs` (piped) and the logs
// API (the SDK's getLobbyLogs), the CPU it burns shows in the lobby's metrics, its exit code stops the lobby (failed,
// which `lobby logs --follow` shows, exit 0), and serve stopped (SIGTERM) leaves no process of a server behind. On
// SQLite, and on two PostgreSQL replicas: the client and the server on A, the CLI and the logs API through B.
// Most of its time is the wait for the server's second CPU sample (the first 1 s after it starts, then one per 5 s).
import fs from 'node:fs';
import path from 'node:path';
import { RivetClient } from '@rivet-gg/api';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { logLines, processesUnder, say, until } from '../helpers/lobby-server.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { replicaEnv, serve, stopReplica, type Replica } from '../helpers/replica.js';
import { runBin } from '../helpers/bin.js';

const GAME_SERVER = path.resolve(import.meta.dirname, '../fixtures/game-server.mjs');
// The server calls ready only when the test says so (the fixture's one knob for this), so a find is seen waiting.
const RUN = `GAME_SERVER_HOLD_READY=1 "${process.execPath}" "${GAME_SERVER}"`;
// The emulator samples a server's CPU 1 s after it starts, then once per 5 s (the service's own rate).
const SAMPLE_EVERY_MS = 5_000;

/** The lobby as the SDK reads it (getNamespaceLobby): cheap to ask again and again while waiting. */
function sdkLobby(r: Replica, lobbyId: string) {
  const cloud = new RivetClient({ environment: r.info.endpoint, token: r.info.tokens.cloud });
  return cloud.cloud.games.namespaces.logs.getNamespaceLobby(r.info.game_id, r.info.namespace_id, lobbyId);
}

/** The lobby as the real `gamehost lobby logs --json` prints it. */
async function cliLobby(r: Replica, lobbyId: string): Promise<any> {
  const out = await runBin(['lobby', 'logs', lobbyId, '--json', '-n', '0'], replicaEnv(tempDir(), r));
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout);
}

// Linux: the orphan check reads /proc.
const LINUX = process.platform === 'linux';
const ENGINES: [string, boolean][] = [
  ['SQLite', LINUX],
  ['two PostgreSQL replicas', LINUX && PG_PRESENT],
];

// The two engines at once: each mostly waits on its server's second sample.
describe.concurrent.each(ENGINES)('a game server on the official SDK run by emulator serve --run, on %s', (engine, present) => {
  const replicas: Replica[] = [];
  afterAll(() => Promise.all(replicas.map(stopReplica)), 30_000);

  it.skipIf(!present)('find waits for its ready, it admits the player, its lines and CPU come back, its exit stops the lobby, serve leaves no process', { timeout: 60_000 }, async ({ onTestFailed }) => {
    // What serve said, printed only when the test fails (a wait that gives up names what it waited for, not why).
    onTestFailed(() => {
      for (const r of replicas) console.error(`emulator serve on ${engine} said:\n${r.stderr()}`);
    });
    const configFile = path.join(tempDir(), 'emulator.json');
    fs.writeFileSync(configFile, JSON.stringify({ startDelayMs: 0, readyDelayMs: 0 }));
    const dataDirs = engine === 'SQLite' ? [tempDir()] : [tempDir(), tempDir()];
    const database = engine === 'SQLite' ? [] : ['--database', await createTestDatabase()];
    replicas.push(...(await Promise.all(dataDirs.map((dir) => serve(['--run', RUN, '--config', configFile, '--data-dir', dir, ...database])))));
    // The client and its lobby's server on A; the CLI and the logs API through B (A itself on SQLite).
    const [a, b = a] = replicas as [Replica, Replica?];
    const cli = (args: string[]) => runBin(args, replicaEnv(tempDir(), b));
    const client = new RivetClient({ environment: a.info.endpoint, token: a.info.tokens.public });

    // The client finds: a lobby is made and its server started, which listens and says where.
    let answeredAt: number | undefined;
    const finding = client.matchmaker.lobbies.find({ gameModes: ['default'] });
    finding.then(() => (answeredAt = Date.now()), () => {});
    const lobbyId = await until('the lobby find made', async () => (await client.matchmaker.lobbies.list()).lobbies[0]?.lobbyId);
    const port = await until('the server listening', async () => {
      const line = (await logLines(b, lobbyId, 'std_out')).find((l) => l.startsWith('listening on '));
      return line === undefined ? undefined : Number(line.slice('listening on '.length));
    });
    // Its server runs and prints, but has not called ready: the find still waits for it.
    expect(answeredAt).toBeUndefined();
    const readyAt = Date.now();
    expect(await say(port, 'ready')).toBe('ready');
    const seat = await finding;
    expect(answeredAt).toBeGreaterThanOrEqual(readyAt);
    expect(seat.lobby.lobbyId).toBe(lobbyId);
    expect(seat.ports.default!.port).toBe(port);

    // The client connects with its player token: admitted once, the same token again refused.
    expect(await say(port, seat.player.token)).toBe('ok');
    expect(await say(port, seat.player.token)).toBe('refused MATCHMAKER_PLAYER_ALREADY_CONNECTED');

    // It burns CPU for a moment; the next sample of its process has it.
    const burnedAnswer = await say(port, 'burn 1000');
    const samplesThen = (await sdkLobby(b, lobbyId)).metrics!.cpu.length;
    expect(samplesThen).toBeGreaterThan(0);
    expect(burnedAnswer).toMatch(/^burned \d+$/);
    const burnedMs = Number(burnedAnswer.slice('burned '.length));
    expect(burnedMs).toBeGreaterThan(0);

    // Its lines, through the CLI (the real executable, piped: the summary, an empty line, the lines alone) and the
    // logs API, both through B.
    const printed = ['listening on ' + port, 'ready', 'admitted a player', burnedAnswer];
    const logs = await cli(['lobby', 'logs', lobbyId, '--stream', 'stdout']);
    expect(logs.code, logs.stderr).toBe(0);
    expect(logs.stderr).toBe('');
    const [summary, lines] = logs.stdout.split('\n\n') as [string, string];
    expect(summary).toMatch(new RegExp(`^lobby_id\t${lobbyId}$`, 'm'));
    expect(lines).toBe(printed.map((l) => `${l}\n`).join(''));
    expect(await logLines(b, lobbyId, 'std_out')).toEqual(printed);
    expect(await logLines(b, lobbyId, 'std_err')).toEqual([]);

    // The next sample (within 5 s), through `lobby logs --json` on B: the replica running the server keeps its
    // samples in the store, so any replica answers them. The burn fell in that sample's window or across it and the
    // one before: one of the two has half of it, over a window of 5 s (a late one, on a busy machine, counted as 7.5 s).
    await until('a sample after the burn', async () => ((await sdkLobby(b, lobbyId)).metrics!.cpu.length > samplesThen ? true : undefined), SAMPLE_EVERY_MS * 3);
    const { metrics } = await cliLobby(b, lobbyId);
    expect(metrics.cpu).toHaveLength(metrics.memory.length);
    expect(Math.max(...metrics.cpu)).toBeGreaterThanOrEqual(((burnedMs / 2) * 100) / (SAMPLE_EVERY_MS * 1.5));
    // The last is a running Node's resident memory (the first may be the shell's, as it started).
    expect(metrics.memory.at(-1)).toBeGreaterThan(10 * 1024 * 1024);
    expect(metrics.memory.at(-1)).toBeLessThan(1024 * 1024 * 1024);

    // It exits 3: `lobby logs --follow`, following as it exits, ends on the lobby's stop with exit 0 and says so; the
    // lobby stopped with that code, failed. (Not read through the SDK: its parser refuses the `"running": null` that
    // production, and so the emulator, send beside `stopped`.)
    const following = cli(['lobby', 'logs', lobbyId, '--follow', '--stream', 'stdout', '--interval', '0.2']);
    expect(await say(port, 'exit 3')).toBe('');
    const follow = await following;
    expect(follow.code).toBe(0);
    expect(follow.stderr).toBe(`lobby ${lobbyId} failed with exit code 3\n`);
    expect((await cliLobby(b, lobbyId)).lobby.status.stopped).toMatchObject({ exit_code: 3, failed: true });
    expect(follow.stdout.split('\n\n')[1]).toBe(lines);
    for (const dir of dataDirs) expect(processesUnder(dir)).toEqual([]);

    // Another lobby's server runs (not ready yet) when serve is stopped: serve stops it first, and exits 0.
    const second = client.matchmaker.lobbies.find({ gameModes: ['default'] });
    second.catch(() => {});
    const running = await until('the second server running', async () => {
      const pids = processesUnder(dataDirs[0]!);
      return pids.length > 0 ? pids : undefined;
    });
    expect(running.length).toBeGreaterThan(0);
    a.child.kill('SIGTERM');
    expect(await a.exit).toEqual({ code: 0, signal: null });
    for (const dir of dataDirs) expect(processesUnder(dir)).toEqual([]);
    expect(await second.then(() => undefined, (e: unknown) => e)).toBeInstanceOf(Error);
  });
});
