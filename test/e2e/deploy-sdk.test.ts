// Acceptance of issue 34: a game on the official SDK (@rivet-gg/api) across a deploy, against `emulator serve --run`
// (each lobby's server the SDK game server of test/fixtures, started by the emulator with its version's environment),
// on SQLite and on two PostgreSQL replicas (deploys through one, the game's calls through the other). Version 1
// (build A) keeps an idle lobby in each region: they are ready before any find, and a find is answered from one; a
// player connects. `gamehost deploy` of version 2 (build B): a new find lands in a lobby of B, the old lobby keeps
// running A and is still joined by id, and stops once its players leave. Tags on a game mode that is not taggable
// are refused; a verification server refusing a find is MATCHMAKER_VERIFICATION_FAILED; an invalid config is every
// error as its path, nothing deployed.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
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

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 20_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

const ENGINES: [string, boolean][] = [
  ['SQLite', true],
  ['two PostgreSQL replicas', PG_PRESENT],
];

describe.each(ENGINES)('a game on the official SDK across a deploy, on %s', (engine, present) => {
  const replicas: Replica[] = [];
  const closers: (() => void)[] = [];
  afterAll(async () => {
    for (const close of closers) close();
    await Promise.all(replicas.map(stopReplica));
  }, SLOW.timeout);

  it.skipIf(!present)('idle lobbies answer the first find; after the deploy new finds land in B, the old lobby runs A until empty', { timeout: 120_000 }, async () => {
    // A verification server that refuses every find it is asked about, and keeps what it was sent.
    const asked: unknown[] = [];
    const verifier = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        asked.push(JSON.parse(body));
        res.writeHead(403).end();
      });
    });
    await new Promise<void>((r) => verifier.listen(0, '127.0.0.1', r));
    closers.push(() => verifier.close());
    const verifyUrl = `http://127.0.0.1:${(verifier.address() as AddressInfo).port}/verify`;

    const configFile = path.join(tempDir(), 'emulator.json');
    fs.writeFileSync(configFile, JSON.stringify({ startDelayMs: 0, readyDelayMs: 0, verificationLoopback: true }));
    const args = ['--run', `"${process.execPath}" "${GAME_SERVER}"`, '--config', configFile];
    if (engine === 'SQLite') replicas.push(await serve([...args, '--data-dir', tempDir()]));
    else {
      const url = await createTestDatabase();
      replicas.push(...(await Promise.all([serve([...args, '--data-dir', tempDir(), '--database', url]), serve([...args, '--data-dir', tempDir(), '--database', url])])));
    }
    const [front, back = front] = replicas as [Replica, Replica?];
    const cli = async (r: Replica, argv: string[], cwd?: string) => {
      const run = await runCli(argv, { env: replicaEnv(tempDir(), r), cwd });
      return run;
    };
    const envOf = async (lobbyId: string) => {
      const printed = await cli(back, ['emulator', 'lobby', 'env', lobbyId, '--json']);
      expect(printed.code, printed.stderr).toBe(0);
      return JSON.parse(printed.stdout) as Record<string, string>;
    };
    /** The namespace's running lobbies, as the cloud's list of them shows them. */
    const running = async () => {
      const res = await fetch(`${back.info.endpoint}/cloud/games/${back.info.game_id}/namespaces/${back.info.namespace_id}/logs/lobbies`, { headers: { authorization: `Bearer ${back.info.tokens.cloud}` } });
      return ((await res.json()) as { lobbies: { lobby_id: string; status: { stopped?: object } }[] }).lobbies.filter((l) => l.status.stopped === undefined);
    };

    // Two builds, pushed with the CLI.
    const dir = tempDir();
    const build = async (name: string) => {
      fs.writeFileSync(path.join(dir, `${name}.tar`), Buffer.alloc(1024, name.charCodeAt(0)));
      const pushed = await cli(front, ['build', 'push', path.join(dir, `${name}.tar`), '--tag', `server:${name}`, '-q', '--progress', 'none']);
      expect(pushed.code, pushed.stderr).toBe(0);
      return pushed.stdout.trim();
    };
    const [buildA, buildB] = [await build('a'), await build('b')];
    const project = (buildId: string, name: string) =>
      [
        'matchmaker:',
        '  max_players: 4',
        '  docker:',
        `    image_id: ${buildId}`,
        `    env: { BUILD: "${name}" }`,
        '    ports:',
        '      default: { port: 7777, protocol: tcp }',
        '  game_modes:',
        '    default:',
        '      regions:',
        '        lnd-atl: { idle_lobbies: { min: 1, max: 1 } }',
        '        lnd-fra: { idle_lobbies: { min: 1, max: 1 } }',
        '    checked:',
        '      actions:',
        `        find: { verification: { url: "${verifyUrl}" } }`,
        '',
      ].join('\n');

    // An invalid config: every error as its path, exit 2, nothing deployed.
    fs.writeFileSync(path.join(dir, 'rivet.yaml'), project(buildA, 'a').replace('max_players: 4', 'max_players: 0'));
    const invalid = await cli(front, ['deploy', 'prod'], dir);
    expect(invalid.code).toBe(2);
    expect(invalid.stderr).toContain('  config.matchmaker.game-modes.*default*.player-counts.max-players-normal.too-low: too low\n');

    // Version 1, build A: an idle lobby in each region, its server ready, before any find.
    fs.writeFileSync(path.join(dir, 'rivet.yaml'), project(buildA, 'a'));
    const v1 = await cli(front, ['deploy', 'prod', '--name', 'v1', '--json'], dir);
    expect(v1.code, v1.stderr).toBe(0);
    const idle = await until('an idle lobby in each region', async () => {
      const lobbies = await running();
      return lobbies.length >= 2 ? lobbies : undefined;
    });
    const client = new RivetClient({ environment: back.info.endpoint, token: back.info.tokens.public });
    const first = await client.matchmaker.lobbies.find({ gameModes: ['default'], regions: ['lnd-atl'] });
    expect(idle.map((l) => l.lobby_id)).toContain(first.lobby.lobbyId);
    const oldLobby = first.lobby.lobbyId;
    expect(await envOf(oldLobby)).toMatchObject({ BUILD: 'a', RIVET_VERSION_NAME: 'v1' });
    const oldPort = first.ports.default!.port!;
    expect(await say(oldPort, first.player.token)).toBe('ok');
    // Tags on a game mode that is not taggable: refused, as production refuses them.
    expect(await sdkError(client.matchmaker.lobbies.find({ gameModes: ['default'], tags: { map: 'dust' } }))).toBe('MATCHMAKER_TAGS_DISABLED');

    // Version 2, build B, deployed through the other replica.
    fs.writeFileSync(path.join(dir, 'rivet.yaml'), project(buildB, 'b'));
    const v2 = await cli(back, ['deploy', 'prod', '--name', 'v2', '--json'], dir);
    expect(v2.code, v2.stderr).toBe(0);
    const frontClient = new RivetClient({ environment: front.info.endpoint, token: front.info.tokens.public });
    const second = await frontClient.matchmaker.lobbies.find({ gameModes: ['default'], regions: ['lnd-atl'] });
    expect(second.lobby.lobbyId).not.toBe(oldLobby);
    expect(await envOf(second.lobby.lobbyId)).toMatchObject({ BUILD: 'b', RIVET_VERSION_NAME: 'v2' });
    expect(await say(second.ports.default!.port!, second.player.token)).toBe('ok');

    // The old lobby runs build A still, and is joined by its id; it stops once its players leave.
    expect(await envOf(oldLobby)).toMatchObject({ BUILD: 'a', RIVET_VERSION_NAME: 'v1' });
    const joined = await frontClient.matchmaker.lobbies.join({ lobbyId: oldLobby });
    expect(await say(oldPort, joined.player.token)).toBe('ok');
    expect(await say(oldPort, `bye ${first.player.token}`)).toBe('bye');
    expect(await say(oldPort, `bye ${joined.player.token}`)).toBe('bye');
    await until('the old lobby to stop', async () => ((await running()).some((l) => l.lobby_id === oldLobby) ? undefined : true));
    expect(await sdkError(client.matchmaker.lobbies.join({ lobbyId: oldLobby }))).toBe('MATCHMAKER_LOBBY_STOPPED');

    // The verification server refuses: the find is refused, with production's body sent.
    expect(await sdkError(client.matchmaker.lobbies.find({ gameModes: ['checked'] }))).toBe('MATCHMAKER_VERIFICATION_FAILED');
    expect(asked.at(-1)).toMatchObject({ kind: 'Find', join_kind: 'Normal', game: { game_mode_name_id: 'checked' } });
  });
});
