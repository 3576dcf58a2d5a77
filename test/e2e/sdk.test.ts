// Acceptance: a game on the official SDK (@rivet-gg/api) against `emulator serve` with --readiness manual. A client
// finds a lobby; a game server started by hand with `gamehost emulator lobby env` calls ready and admits the player
// through players.connected; a reused or forged token is refused; the server's state is read by the client; list
// and statistics count the player; a disconnect stops the lobby find made. On SQLite, and on two PostgreSQL
// replicas (the client on one, the server on the other).
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { RivetClient, RivetError } from '@rivet-gg/api';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli, tempDir } from '../helpers/cli.js';
import { say } from '../helpers/lobby-server.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { replicaEnv, serve, SLOW, stopReplica, type Replica } from '../helpers/replica.js';

const GAME_SERVER = path.resolve(__dirname, '../fixtures/game-server.mjs');

async function sdkError(promise: Promise<unknown>): Promise<string> {
  const err = await promise.then(() => undefined, (e: unknown) => e);
  expect(err).toBeInstanceOf(RivetError);
  return ((err as RivetError).body as { code: string }).code;
}

const ENGINES: [string, boolean][] = [
  ['SQLite', true],
  ['two PostgreSQL replicas', PG_PRESENT],
];

describe.each(ENGINES)('a game on the official SDK against emulator serve on %s', (engine, present) => {
  const replicas: Replica[] = [];
  afterAll(() => Promise.all(replicas.map(stopReplica)), SLOW.timeout);

  it.skipIf(!present)('find, ready, connected, state, list, statistics and a disconnect', { timeout: 90_000 }, async () => {
    const configFile = path.join(tempDir(), 'emulator.json');
    fs.writeFileSync(configFile, JSON.stringify({ startDelayMs: 0, readyDelayMs: 0 }));
    const args = ['--readiness', 'manual', '--config', configFile, '--data-dir', tempDir()];
    if (engine === 'SQLite') replicas.push(await serve(args));
    else {
      const url = await createTestDatabase();
      replicas.push(...(await Promise.all([serve([...args, '--database', url]), serve([...args, '--database', url])])));
    }
    const [front, back = front] = replicas as [Replica, Replica?];
    const client = new RivetClient({ environment: front.info.endpoint, token: front.info.tokens.public });

    // The client finds: the lobby is made, and the answer waits for its server.
    const finding = client.matchmaker.lobbies.find({ gameModes: ['duos'], tags: { map: 'dust' } });
    let lobbyId: string | undefined;
    for (let i = 0; i < 200 && lobbyId === undefined; i++) {
      lobbyId = (await client.matchmaker.lobbies.list()).lobbies.find((l) => l.gameModeId === 'duos')?.lobbyId;
      if (lobbyId === undefined) await new Promise((r) => setTimeout(r, 25));
    }
    expect(lobbyId).toBeDefined();

    // The server, started by hand with the lobby's environment, through the other replica.
    const printed = await runCli(['emulator', 'lobby', 'env', lobbyId!, '--json'], { env: replicaEnv(tempDir(), back) });
    expect(printed.code, printed.stderr).toBe(0);
    const lobbyEnv = JSON.parse(printed.stdout) as Record<string, string>;
    expect(lobbyEnv.RIVET_API_ENDPOINT).toBe(back.info.endpoint);
    const server = spawn(process.execPath, [GAME_SERVER], { env: { PATH: process.env.PATH, ...lobbyEnv }, stdio: ['ignore', 'pipe', 'inherit'] });
    const serverExit = new Promise((resolve) => server.once('exit', resolve));
    try {
      // It says where it listens, then that it called ready.
      const lines = readline.createInterface({ input: server.stdout! })[Symbol.asyncIterator]();
      expect((await lines.next()).value).toBe(`listening on ${lobbyEnv.PORT_default}`);
      expect((await lines.next()).value).toBe('ready');
      const found = await finding;
      expect(found.lobby.lobbyId).toBe(lobbyId);
      const port = found.ports.default!.port!;
      expect(port).toBe(Number(lobbyEnv.PORT_default));

      // The client connects with its token: admitted once; the same token again, or a forged one, refused.
      const token = found.player.token;
      expect(await say(port, token)).toBe('ok');
      expect(await say(port, token)).toBe('refused MATCHMAKER_PLAYER_ALREADY_CONNECTED');
      const [label, head, claims] = token.split('.');
      expect(await say(port, `${label}.${head}.${claims}.forged`)).toBe('refused TOKEN_ERROR');

      // The server's state, read by the client; list and statistics count the connected player.
      expect(await client.matchmaker.lobbies.getState(lobbyId!)).toEqual({ round: 1, map: 'dust' });
      const listed = await client.matchmaker.lobbies.list({ includeState: true });
      expect(listed.lobbies.find((l) => l.lobbyId === lobbyId)).toMatchObject({ totalPlayerCount: 1, state: { round: 1, map: 'dust' } });
      expect((await client.matchmaker.players.getStatistics()).playerCount).toBe(1);
      expect((await client.matchmaker.regions.list()).regions.map((r) => r.regionId)).toEqual(['lnd-atl', 'lnd-fra', 'lnd-sgp']);

      // The player leaves: the lobby find made stops, which the client sees.
      expect(await say(port, `bye ${token}`)).toBe('bye');
      expect((await client.matchmaker.players.getStatistics()).playerCount).toBe(0);
      expect(await sdkError(client.matchmaker.lobbies.join({ lobbyId: lobbyId! }))).toBe('MATCHMAKER_LOBBY_STOPPED');
    } finally {
      server.kill('SIGTERM');
      await serverExit;
    }
  });
});
