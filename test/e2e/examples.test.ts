// Acceptance (issue 32): the example game server and client of examples/node-sdk (the official SDK, nothing else)
// play end to end the three ways docs/emulator.md shows, with the real executable: the server started by hand with
// `emulator lobby env` (against `serve --readiness manual`), by `emulator serve --run`, and as the Dockerfile's
// image, built offline from the base node-base.mjs makes, pushed with `build push` and run by `serve --run-build`.
// Each way: a lobby made, the client's find answered once the server is ready, the client admitted (one player in
// `lobby list`, and in the state the server sets), a bad token refused, the client's line echoed, its leaving seen
// in `lobby list` (no player), then SIGTERM: the server tells its players, exits 0, and where the emulator runs
// it the lobby is stopped, not failed. The Docker way needs a daemon (skipped without one, failed under CI).
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { RivetClient, RivetError } from '@rivet-gg/api';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/cli.js';
import { buildImage, DOCKER, DOCKER_PRESENT, recordedImages, saveImage } from '../helpers/docker.js';
import { lobbyJson, logLines, say, until } from '../helpers/lobby-server.js';
import { replicaEnv, serve, stopReplica, type Replica } from '../helpers/replica.js';
import { BIN, runBin } from '../helpers/bin.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EXAMPLE = path.join(ROOT, 'examples', 'node-sdk');

// The commands docs/emulator.md shows, run here as written (from the repository's root, `gamehost` and `node` on the
// PATH); the first test checks that the page still shows them.
const DOCUMENTED = {
  byHand: 'eval "$(gamehost emulator lobby env "$LOBBY")" && node examples/node-sdk/server.mjs',
  client: 'node examples/node-sdk/client.mjs',
  run: 'gamehost emulator serve --run "exec node $PWD/examples/node-sdk/server.mjs"',
  base: 'node examples/node-sdk/node-base.mjs node-base && docker build -t local/node node-base',
  image: 'docker build -t game-server examples/node-sdk && docker save game-server -o server.tar',
  push: 'gamehost build push server.tar --tag game-server:v1',
  runBuild: 'gamehost emulator serve --run-build game-server:v1',
};

/** A PATH with this run's Node first and a `gamehost` that runs this checkout's bin. */
function toolsPath(): string {
  const bin = tempDir();
  fs.writeFileSync(path.join(bin, 'gamehost'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`, { mode: 0o755 });
  return [bin, path.dirname(process.execPath), process.env.PATH].join(path.delimiter);
}
const PATH = toolsPath();

interface Running {
  child: ChildProcess;
  lines: string[];
  /** The first line of stdout matching `re`, once printed (a bound, not a timing: it fails the test if it never comes). */
  line(re: RegExp): Promise<string>;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  stderr(): string;
}

/** A bash command from the repository's root, its stdout read line by line. */
function start(command: string, env: Record<string, string>): Running {
  const child = spawn('bash', ['-c', command], { cwd: ROOT, env: { PATH, HOME: tempDir(), ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  const lines: string[] = [];
  const waiters: (() => void)[] = [];
  let err = '';
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  readline.createInterface({ input: child.stdout! }).on('line', (l) => {
    lines.push(l);
    for (const w of waiters.splice(0)) w();
  });
  const line = async (re: RegExp): Promise<string> => {
    let ended = false;
    void exit.then(() => {
      ended = true;
      for (const w of waiters.splice(0)) w();
    });
    for (;;) {
      const found = lines.find((l) => re.test(l));
      if (found !== undefined) return found;
      if (ended) throw new Error(`${command} ended without a line matching ${re}: ${lines.join('\n')}\n${err}`);
      await new Promise<void>((resolve) => waiters.push(resolve));
    }
  };
  return { child, lines, line, exit, stderr: () => err };
}

/** The lobby as `gamehost lobby list --state --json` lists it (undefined when not listed). */
async function listed(r: Replica, lobbyId: string): Promise<{ total_player_count: number; state?: unknown } | undefined> {
  const out = await runBin(['lobby', 'list', '--state', '--json'], replicaEnv(tempDir(), r));
  expect(out.code, out.stderr).toBe(0);
  return (JSON.parse(out.stdout).lobbies as { lobby_id: string; total_player_count: number; state?: unknown }[]).find((l) => l.lobby_id === lobbyId);
}

/** `gamehost lobby create --game-mode default -q`: the lobby the client's find then joins (the only one, so the fullest). */
async function createLobby(r: Replica): Promise<string> {
  const out = await runBin(['lobby', 'create', '--game-mode', 'default', '-q'], replicaEnv(tempDir(), r));
  expect(out.code, out.stderr).toBe(0);
  return out.stdout.trim();
}

/**
 * The client plays in the lobby: found (once its server is ready), admitted, one player listed, a bad token refused,
 * a line echoed, then it leaves and the lobby is listed with no player. Answers the server's port.
 */
async function play(r: Replica, lobbyId: string): Promise<number> {
  const client = start(DOCUMENTED.client, { GAMEHOST_ENDPOINT: r.info.endpoint, GAMEHOST_NAMESPACE_TOKEN: r.info.tokens.public });
  const found = await client.line(/^found lobby /);
  const where = new RegExp(`^found lobby ${lobbyId} in Atlanta, its server at (\\S+):(\\d+)$`).exec(found);
  expect(where, found).not.toBeNull();
  const port = Number(where![2]);
  expect(await client.line(/^admitted: /)).toBe('admitted: 1 player(s) connected');
  expect(await listed(r, lobbyId)).toMatchObject({ total_player_count: 1 });
  expect(await until('the state the server set', async () => ((await listed(r, lobbyId))?.state as { players?: number } | undefined)?.players === 1 || undefined)).toBe(true);

  // Another connection with a token that is not a player's: refused, and closed.
  expect(await say(port, 'not-a-player-token')).toBe('refused TOKEN_ERROR');

  client.child.stdin!.write('hello\n');
  expect(await client.line(/^server: /)).toBe('server: echo hello');
  client.child.stdin!.end();
  expect(await client.line(/^disconnected$/)).toBe('disconnected');
  expect((await client.exit).code, client.stderr()).toBe(0);
  expect(client.stderr()).toBe('');
  // The server told the matchmaker: no player, as `lobby list` shows (the lobby stays: the player `lobby create`
  // made is still pending, and holds it).
  const after = await until('the player gone', async () => {
    const l = await listed(r, lobbyId);
    return l?.total_player_count === 0 && (l.state as { players?: number }).players === 0 ? l : undefined;
  });
  expect(after).toMatchObject({ total_player_count: 0, state: { players: 0 } });
  return port;
}

/** What the server prints, in order, for the game play() plays and a SIGTERM after it. */
const printed = (port: number, lobbyId: string) => [
  `listening on ${port}`,
  `ready (lobby ${lobbyId})`,
  'player admitted (1 connected)',
  'player refused: TOKEN_ERROR',
  'player left (0 connected)',
  'SIGTERM: stopping',
  'stopped',
];

const replicas: Replica[] = [];
afterAll(() => Promise.all(replicas.map(stopReplica)), 30_000);

/** Read back through serve started again on the data directory: the lobby stopped cleanly, with all it printed. */
async function expectStoppedCleanly(dataDir: string, lobbyId: string, port: number): Promise<void> {
  const again = await serve(['--data-dir', dataDir]);
  replicas.push(again);
  expect((await lobbyJson(again, lobbyId)).lobby.status.stopped).toMatchObject({ exit_code: 0, failed: false });
  expect(await logLines(again, lobbyId, 'std_out')).toEqual(printed(port, lobbyId));
  expect(await logLines(again, lobbyId, 'std_err')).toEqual([]);
}

describe('examples/node-sdk, as docs/emulator.md shows it', () => {
  it('docs/emulator.md shows the commands these tests run', () => {
    const docs = fs.readFileSync(path.join(ROOT, 'docs', 'emulator.md'), 'utf8');
    for (const command of Object.values(DOCUMENTED)) expect(docs).toContain(command);
  });

  it('by hand: the server started with `emulator lobby env` against serve --readiness manual; SIGTERM ends it, exit 0', { timeout: 60_000 }, async () => {
    const r = await serve(['--readiness', 'manual', '--data-dir', tempDir()]);
    replicas.push(r);
    const lobbyId = await createLobby(r);
    const server = start(DOCUMENTED.byHand, { ...replicaEnv(tempDir(), r), LOBBY: lobbyId });
    await server.line(/^ready /);
    const port = await play(r, lobbyId);
    // The documented line leaves the shell to the server (bash runs the last command in its place): its signal.
    server.child.kill('SIGTERM');
    expect(await server.exit).toEqual({ code: 0, signal: null });
    expect(server.lines).toEqual(printed(port, lobbyId));
    expect(server.stderr()).toBe('');
  });

  it('emulator serve --run: the emulator starts it; serve stopped (SIGTERM) stops it, exit 0, the lobby stopped not failed', { timeout: 60_000 }, async () => {
    const dataDir = tempDir();
    const run = /--run "(.*)"$/.exec(DOCUMENTED.run)![1]!.replace('$PWD', ROOT);
    const r = await serve(['--run', run, '--data-dir', dataDir], { PATH });
    replicas.push(r);
    const lobbyId = await createLobby(r);
    const port = await play(r, lobbyId);

    // A lobby of the client's own find (duos): when it leaves, its last player, the lobby stops; the emulator's
    // SIGTERM ends the server, exit 0, and the calls the lobby's stop refused are not reported as errors.
    const duos = start(`${DOCUMENTED.client} duos`, { GAMEHOST_ENDPOINT: r.info.endpoint, GAMEHOST_NAMESPACE_TOKEN: r.info.tokens.public });
    const duosLobby = /^found lobby (\S+) /.exec(await duos.line(/^found lobby /))![1]!;
    await duos.line(/^admitted: /);
    duos.child.stdin!.end();
    expect((await duos.exit).code, duos.stderr()).toBe(0);
    const stopped = await until('the duos lobby stopped', async () => (await lobbyJson(r, duosLobby)).lobby.status.stopped ?? undefined);
    expect(stopped).toMatchObject({ exit_code: 0, failed: false });
    const duosLines = await until('its server\'s last line', async () => {
      const lines = await logLines(r, duosLobby, 'std_out');
      return lines.at(-1) === 'stopped' ? lines : undefined;
    });
    expect(duosLines.slice(2)).toEqual(['player admitted (1 connected)', 'player left (0 connected)', 'SIGTERM: stopping', 'stopped']);
    expect(await logLines(r, duosLobby, 'std_err')).toEqual([]);

    r.child.kill('SIGTERM');
    expect(await r.exit).toEqual({ code: 0, signal: null });

    await expectStoppedCleanly(dataDir, lobbyId, port);
  });
});

describe('docs/game-server.md', () => {
  it('its calls with curl, run as written in a shell with the lobby\'s environment: each answers {}, and the lobby shows them', { timeout: 60_000 }, async () => {
    const docs = fs.readFileSync(path.join(ROOT, 'docs', 'game-server.md'), 'utf8');
    const blocks = [...docs.matchAll(/```sh\n([\s\S]*?)```/g)].map((m) => m[1]!);
    expect(blocks).toHaveLength(1);
    const calls = blocks[0]!.trim().split('\n');
    expect(calls.map((c) => /\/matchmaker\/\S+(?=")/.exec(c)?.[0])).toEqual([
      '/matchmaker/lobbies/ready',
      '/matchmaker/players/connected',
      '/matchmaker/lobbies/state',
      '/matchmaker/lobbies/closed',
      '/matchmaker/players/disconnected',
    ]);
    const r = await serve(['--readiness', 'manual', '--data-dir', tempDir()]);
    replicas.push(r);
    const created = await runBin(['lobby', 'create', '--game-mode', 'default', '--json'], replicaEnv(tempDir(), r));
    expect(created.code, created.stderr).toBe(0);
    const { lobby } = JSON.parse(created.stdout) as { lobby: { lobby_id: string; player: { token: string } } };
    // Each call on its own, so the lobby is seen between them.
    const env = { ...replicaEnv(tempDir(), r), LOBBY: lobby.lobby_id, PLAYER_TOKEN: lobby.player.token };
    const call = async (n: number) => {
      const shell = start(`set -e; eval "$(gamehost emulator lobby env "$LOBBY")"; ${calls[n]}`, env);
      expect(await shell.exit, shell.stderr()).toEqual({ code: 0, signal: null });
      expect(shell.lines).toEqual(['{}']);
    };
    await call(0);
    expect((await lobbyJson(r, lobby.lobby_id)).lobby.status.running).toBeDefined();
    await call(1);
    expect(await listed(r, lobby.lobby_id)).toMatchObject({ total_player_count: 1 });
    await call(2);
    expect(await listed(r, lobby.lobby_id)).toMatchObject({ state: { players: 1 } });
    await call(3);
    // Closed: a find no longer lands in it (it makes a lobby of its own, which is not ready: no server calls ready).
    const client = new RivetClient({ environment: r.info.endpoint, token: r.info.tokens.public });
    const refused = await client.matchmaker.lobbies.find({ gameModes: ['default'], preventAutoCreateLobby: true }).then(() => undefined, (e: unknown) => e);
    expect((refused as RivetError).body).toMatchObject({ code: 'MATCHMAKER_NO_AVAILABLE_LOBBIES' });
    await call(4);
    // Its last player gone, the lobby stops (production's default of no idle lobbies): no longer listed.
    expect(await listed(r, lobby.lobby_id)).toBeUndefined();
    expect((await lobbyJson(r, lobby.lobby_id)).lobby.status.stopped).toMatchObject({ failed: false });
  });
});

describe.skipIf(!DOCKER_PRESENT || process.platform !== 'linux')('examples/node-sdk as an image: the Dockerfile built offline, pushed, run by --run-build', { timeout: 180_000 }, () => {
  const unique = `${process.pid}-${Date.now()}`;
  // The documented names, made unique on this daemon: local/node and game-server.
  const BASE = `gamehost-test/example-node:${unique}`;
  const IMAGE = `gamehost-test/example-server:${unique}`;
  const TAG = /--tag (\S+)$/.exec(DOCUMENTED.push)![1]!;
  const loaded: string[] = [];
  afterAll(async () => {
    for (const image of [...loaded, IMAGE, BASE]) await DOCKER!.removeImage(image).catch(() => {});
  }, 60_000);

  it('plays as the process does; serve stopped (SIGTERM) stops its container, exit 0, the lobby stopped not failed', async () => {
    const work = tempDir();
    // The base, as the page makes it: node-base.mjs's build context, built by the daemon.
    const made = start(`node examples/node-sdk/node-base.mjs "${path.join(work, 'node-base')}"`, {});
    expect((await made.exit).code, made.stderr()).toBe(0);
    await buildImage(path.join(work, 'node-base'), BASE);
    // The example's directory after `npm install --omit=dev`: the SDK in its node_modules (here, this checkout's).
    const context = path.join(work, 'node-sdk');
    fs.cpSync(EXAMPLE, context, { recursive: true });
    fs.cpSync(path.join(ROOT, 'node_modules', '@rivet-gg', 'api'), path.join(context, 'node_modules', '@rivet-gg', 'api'), { recursive: true, dereference: true });
    await buildImage(context, IMAGE, { BASE });
    const tar = path.join(work, 'server.tar');
    await saveImage(IMAGE, tar);
    await DOCKER!.removeImage(IMAGE);

    const dataDir = tempDir();
    const r = await serve(['--run-build', TAG, '--data-dir', dataDir], { PATH, DOCKER_HOST: process.env.DOCKER_HOST });
    replicas.push(r);
    const pushed = await runBin(['build', 'push', tar, '--tag', TAG], replicaEnv(tempDir(), r));
    expect(pushed.code, pushed.stderr).toBe(0);
    const lobbyId = await createLobby(r);
    const port = await play(r, lobbyId);
    // Loaded by now (its container ran), to remove after.
    loaded.push(...recordedImages(dataDir));
    expect(loaded.length).toBeGreaterThan(0);
    r.child.kill('SIGTERM');
    expect(await r.exit).toEqual({ code: 0, signal: null });

    await expectStoppedCleanly(dataDir, lobbyId, port);
  });
});
