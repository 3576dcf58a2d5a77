// Playing against lobbies whose servers `emulator serve` runs (the game server fixture, test/fixtures/game-server.mjs,
// as a process with --run or in a container with --run-build): the client's side through the official SDK, a line
// to the server on its port, the server's lines and the lobby as the service and the CLI show them.
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { RivetClient } from '@rivet-gg/api';
import { expect } from 'vitest';
import { runCli, tempDir } from './cli.js';
import { replicaEnv, type Replica } from './replica.js';

/** Waits for `check` to give a value (a bound, not a timing: a server that never does fails the test). */
export async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await check();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(50);
  }
}

/** One line to the game server on its port; its one-line answer ('' when it closes without one). */
export async function say(port: number, line: string): Promise<string> {
  const socket = net.connect(port, '127.0.0.1');
  socket.write(`${line}\n`);
  const answer = await new Promise<string>((resolve) => {
    readline.createInterface({ input: socket }).once('line', resolve);
    socket.once('close', () => resolve(''));
    socket.once('error', () => resolve(''));
  });
  socket.destroy();
  return answer;
}

/** A lobby's lines of one stream, through the service's logs route (the official SDK's getLobbyLogs). */
export async function logLines(r: Replica, lobbyId: string, stream: 'std_out' | 'std_err'): Promise<string[]> {
  const cloud = new RivetClient({ environment: r.info.endpoint, token: r.info.tokens.cloud });
  const { lines } = await cloud.cloud.games.matchmaker.getLobbyLogs(r.info.game_id, lobbyId, { stream });
  return lines.map((l) => Buffer.from(l, 'base64').toString());
}

/** The lobby as `gamehost lobby logs --json` prints it (the service's getNamespaceLobby: status and metrics). */
export async function lobbyJson(r: Replica, lobbyId: string): Promise<any> {
  const out = await runCli(['lobby', 'logs', lobbyId, '--json'], { env: replicaEnv(tempDir(), r) });
  expect(out.code, out.stderr).toBe(0);
  return JSON.parse(out.stdout);
}

/** The find of one lobby's SDK client, and the lobby it made (listed before its server is ready). */
export async function findLobby(r: Replica): Promise<{ lobbyId: string; found: ReturnType<RivetClient['matchmaker']['lobbies']['find']> }> {
  const client = new RivetClient({ environment: r.info.endpoint, token: r.info.tokens.public });
  const before = new Set((await client.matchmaker.lobbies.list()).lobbies.map((l) => l.lobbyId));
  let lobbyId: string | undefined;
  // A find that fails says why: its answer, what serve printed and the lobby's lines (a failure under load that
  // cannot be rerun must explain itself).
  const found = client.matchmaker.lobbies.find({ gameModes: ['default'] }).catch(async (err: Error) => {
    const said = lobbyId === undefined ? 'no lobby seen' : `the lobby's std_err: ${(await logLines(r, lobbyId, 'std_err').catch((e: Error) => [e.message])).join(' | ')}`;
    throw new Error(`the find failed (${err.message} ${JSON.stringify((err as { body?: unknown }).body)}); serve said: ${r.stderr()}; ${said}`);
  });
  found.catch(() => {});
  lobbyId = await until('the lobby find made', async () => {
    const [fresh] = (await client.matchmaker.lobbies.list()).lobbies.filter((l) => !before.has(l.lobbyId));
    return fresh?.lobbyId;
  });
  return { lobbyId, found };
}

/**
 * The processes whose working directory is under `dir` (Linux, /proc): a lobby's server and all it started run in
 * the lobby's own directory under the data directory, so after a stop none may be left there.
 */
export function processesUnder(dir: string): number[] {
  const root = fs.realpathSync(dir);
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cwd: string;
    try {
      cwd = fs.readlinkSync(`/proc/${entry}/cwd`);
    } catch {
      continue; // Gone meanwhile, or not ours to look at.
    }
    if (cwd === root || cwd.startsWith(root + path.sep)) pids.push(Number(entry));
  }
  return pids;
}
