// The matchmaker rules of a version (issue 34; SERVICE-FACTS "Versions, namespaces…" §3 and §6), over real HTTP and
// the official client: idle lobbies made by a deploy answer the first find and are made again to keep the min; a lobby
// that empties stays up idle up to the max, the longest-idle beyond it stop; the namespace's lobby_count_max and
// per-client bound from its mm-config.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { RivetClient } from '@rivet-gg/api';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/emulator/services/clock.js';
import { GAME_ID, NAMESPACE_ID, regionUuid } from '../../src/emulator/services/ids.js';
import { LobbyVersions } from '../../src/emulator/services/lobby-versions.js';
import { tempDir } from '../helpers/cli.js';
import { expectErrorShape, startTestEmulator, stopLobby, type TestEmulator } from '../helpers/emulator.js';

interface ListedLobby {
  lobby_id: string;
  lobby_group_name_id: string;
  region_id: string;
  status: { running?: object | null; stopped?: object };
}

describe('idle lobbies and the namespace bounds', () => {
  let emu: TestEmulator;
  const clock = new ManualClock();
  const cloud = (method: string, path: string, body?: unknown) => emu.call(method, `/cloud/games/${GAME_ID}${path}`, { token: emu.tokens.cloud, ...(body === undefined ? {} : { body }) });
  const find = (body: unknown) => emu.call('POST', '/matchmaker/lobbies/find', { token: emu.tokens.public, body });
  const create = (body: unknown) => emu.call('POST', '/matchmaker/lobbies/create', { token: emu.tokens.public, body });
  const lobbyToken = async (lobbyId: string) => (await emu.call('GET', `/_emulator/lobbies/${lobbyId}/env`)).json.env.RIVET_TOKEN as string;
  const leave = async (seat: { lobby: { lobby_id: string }; player: { token: string } }) => {
    const left = await emu.call('POST', '/matchmaker/players/disconnected', { token: await lobbyToken(seat.lobby.lobby_id), body: { player_token: seat.player.token } });
    expect(left.status, left.text).toBe(200);
  };
  /** The namespace's running lobbies, as the cloud's logs list shows them, after the background idle updates. */
  const running = async (regionId?: string): Promise<ListedLobby[]> => {
    await emu.services.idleLobbies.settled();
    const listed = await cloud('GET', `/namespaces/${NAMESPACE_ID}/logs/lobbies`);
    expect(listed.status, listed.text).toBe(200);
    return (listed.json.lobbies as ListedLobby[]).filter((l) => l.status.stopped === undefined && (regionId === undefined || l.region_id === regionUuid(regionId)));
  };

  let buildId: string;
  const deploy = async (displayName: string, matchmaker: object): Promise<string> => {
    const v = await cloud('POST', '/versions', { display_name: displayName, config: { matchmaker } });
    expect(v.status, v.text).toBe(200);
    const client = new RivetClient({ environment: emu.endpoint, token: emu.tokens.cloud });
    await client.cloud.games.namespaces.updateGameNamespaceVersion(GAME_ID, NAMESPACE_ID, { versionId: v.json.version_id });
    return v.json.version_id as string;
  };

  beforeAll(async () => {
    emu = await startTestEmulator({}, { clock });
    const created = await cloud('POST', '/builds', { display_name: 'idle', image_tag: 'server:idle', image_file: { path: 'server.tar', content_length: 4 } });
    expect(created.status, created.text).toBe(200);
    expect((await fetch(created.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 1) })).status).toBe(200);
    expect((await emu.call('POST', `/cloud/uploads/${created.json.upload_id}/complete`, { token: emu.tokens.cloud, body: {} })).status).toBe(200);
    buildId = created.json.build_id as string;
  });
  afterAll(() => emu?.stop());

  it('a deploy makes the min idle lobbies, a find takes one and the min is made again; emptied lobbies stay up to the max', async () => {
    // One player a lobby, so each find takes a lobby of its own.
    const solo = {
      max_players: 1,
      regions: { 'lnd-atl': { idle_lobbies: { min: 1, max: 2 } }, 'lnd-fra': { idle_lobbies: { min: 1, max: 2 } } },
      docker: { image_id: buildId, ports: { game: { port: 7777, protocol: 'udp' } } },
    };
    await deploy('idle-1', { game_modes: { solo } });
    // Before any find: one idle lobby in each region, public, of the game mode.
    const atl = await running('lnd-atl');
    expect(atl.map((l) => l.lobby_group_name_id)).toEqual(['solo']);
    expect(await running('lnd-fra')).toHaveLength(1);
    expect(await running()).toHaveLength(2);

    // The official client's find is answered by the idle lobby: no lobby made for it.
    const pub = new RivetClient({ environment: emu.endpoint, token: emu.tokens.public });
    clock.advance(1000);
    const first = await pub.matchmaker.lobbies.find({ gameModes: ['solo'], regions: ['lnd-atl'] });
    expect(first.lobby.lobbyId).toBe(atl[0]!.lobby_id);
    // Then the update after it makes another to keep the min.
    const afterFirst = await running('lnd-atl');
    expect(afterFirst).toHaveLength(2);
    const second = afterFirst.find((l) => l.lobby_id !== first.lobby.lobbyId)!;

    clock.advance(1000);
    const b = await find({ game_modes: ['solo'], regions: ['lnd-atl'] });
    expect(b.status, b.text).toBe(200);
    expect(b.json.lobby.lobby_id).toBe(second.lobby_id);
    clock.advance(1000);
    const c = await find({ game_modes: ['solo'], regions: ['lnd-atl'] });
    expect(c.status, c.text).toBe(200);
    // Three occupied, one idle (made after the third find).
    const beforeLeaving = await running('lnd-atl');
    expect(beforeLeaving).toHaveLength(4);
    const idle = beforeLeaving.filter((l) => ![first.lobby.lobbyId, b.json.lobby.lobby_id, c.json.lobby.lobby_id].includes(l.lobby_id));
    expect(idle).toHaveLength(1);

    // A lobby whose player leaves stays up as idle (2 idle: the max).
    clock.advance(1000);
    await leave(b.json);
    const afterOne = (await running('lnd-atl')).map((l) => l.lobby_id);
    expect(afterOne).toHaveLength(4);
    expect(afterOne).toContain(b.json.lobby.lobby_id);
    // A third idle one is past the max: the longest idle (the updater's) stops.
    clock.advance(1000);
    await leave(c.json);
    const afterTwo = (await running('lnd-atl')).map((l) => l.lobby_id);
    expect(afterTwo.sort()).toEqual([first.lobby.lobbyId, b.json.lobby.lobby_id, c.json.lobby.lobby_id].sort());

    // An emptied lobby is found again (no lobby made: the min is kept).
    clock.advance(1000);
    const again = await find({ game_modes: ['solo'], regions: ['lnd-atl'] });
    expect([b.json.lobby.lobby_id, c.json.lobby.lobby_id]).toContain(again.json.lobby.lobby_id);
    expect(await running('lnd-atl')).toHaveLength(3);

    // Frankfurt was left alone by all of this.
    expect(await running('lnd-fra')).toHaveLength(1);

    // The next deploy stops the older version's idle lobbies, and makes its own.
    await deploy('idle-2', { game_modes: { duo: { ...solo, max_players: 2, regions: { 'lnd-fra': { idle_lobbies: { min: 2, max: 2 } } } } } });
    const now = await running();
    // Occupied older lobbies run on (two in Atlanta); Frankfurt's idle lobby of solo stopped, two of duo made.
    expect(now.filter((l) => l.lobby_group_name_id === 'solo').map((l) => l.region_id)).toEqual([regionUuid('lnd-atl'), regionUuid('lnd-atl')]);
    expect(now.filter((l) => l.lobby_group_name_id === 'duo').map((l) => l.region_id)).toEqual([regionUuid('lnd-fra'), regionUuid('lnd-fra')]);
    // An older lobby that empties now stops: its version keeps no idle lobby any more.
    await leave({ lobby: { lobby_id: first.lobby.lobbyId }, player: { token: first.player!.token } });
    expect((await running('lnd-atl')).map((l) => l.lobby_id)).not.toContain(first.lobby.lobbyId);
  });

  it('lobby_count_max: finds make up to max - 1 lobbies, creates up to max; max_players_per_client bounds one address', async () => {
    const open = {
      max_players: 1,
      regions: { 'lnd-sgp': {} },
      docker: { image_id: buildId, ports: { game: { port: 7777, protocol: 'udp' } } },
      actions: { create: { enable_public: true } },
    };
    await deploy('bounds-1', { game_modes: { open } });
    const base = (await running()).length;
    const limits = await cloud('POST', `/namespaces/${NAMESPACE_ID}/mm-config`, { lobby_count_max: base + 3, max_players: 16 });
    expect(limits.status, limits.text).toBe(200);
    // Finds make lobbies while fewer than max - 1 run: two here.
    for (let i = 0; i < 2; i++) {
      const made = await find({ game_modes: ['open'] });
      expect(made.status, made.text).toBe(200);
    }
    const refused = await find({ game_modes: ['open'] });
    expectErrorShape(refused, 400, 'MATCHMAKER_TOO_MANY_LOBBIES');
    // A custom lobby may take the last place.
    const custom = await create({ game_mode: 'open' });
    expect(custom.status, custom.text).toBe(200);
    expectErrorShape(await create({ game_mode: 'open' }), 400, 'MATCHMAKER_TOO_MANY_LOBBIES');

    // Every running lobby holds one player of this address (pending or connected): the mm-config's max_players
    // bounds them, for find and create alike.
    const players = (await running()).length;
    const bound = await cloud('POST', `/namespaces/${NAMESPACE_ID}/mm-config`, { lobby_count_max: 1000, max_players: players + 1 });
    expect(bound.status, bound.text).toBe(200);
    expect((await find({ game_modes: ['open'] })).status).toBe(200);
    const tooMany = await find({ game_modes: ['open'] });
    expectErrorShape(tooMany, 400, 'MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE');
    expect(tooMany.json.message).toContain(`${players + 1} at most`);
    expectErrorShape(await create({ game_mode: 'open' }), 400, 'MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE');
  });
});

describe('the verification call of find, join and create', () => {
  let emu: TestEmulator;
  let server: http.Server;
  let base: string;
  const received: { url: string; headers: http.IncomingHttpHeaders; body: unknown }[] = [];

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ url: req.url!, headers: req.headers, body: JSON.parse(Buffer.concat(chunks).toString()) });
        res.writeHead(req.url === '/allow' ? 204 : 403).end('no');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    // A verification server on this host: allowed only with verificationLoopback (production refuses the address).
    emu = await startTestEmulator({ verificationLoopback: true });
  });
  afterAll(async () => {
    await emu?.stop();
    server?.close();
  });

  it('a 2xx allows with production body, a refusal is VERIFICATION_FAILED, an unreachable URL VERIFICATION_REQUEST_FAILED', async () => {
    const cloud = (method: string, path: string, body?: unknown) => emu.call(method, `/cloud/games/${GAME_ID}${path}`, { token: emu.tokens.cloud, ...(body === undefined ? {} : { body }) });
    const created = await cloud('POST', '/builds', { display_name: 'v', image_tag: 'server:v', image_file: { path: 'server.tar', content_length: 4 } });
    await fetch(created.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 1) });
    await emu.call('POST', `/cloud/uploads/${created.json.upload_id}/complete`, { token: emu.tokens.cloud, body: {} });
    const docker = { image_id: created.json.build_id, ports: { game: { port: 7777, protocol: 'udp' } } };
    const verification = (path: string) => ({ verification: { url: `${base}${path}`, headers: { 'x-game-key': 'secret' } } });
    const game_modes = {
      open: { docker, regions: { 'lnd-atl': {} }, taggable: true, actions: { find: verification('/allow'), join: verification('/refuse'), create: { enable_public: true, ...verification('/allow') } } },
      closed: { docker, regions: { 'lnd-atl': {} }, actions: { find: verification('/refuse') } },
      gone: { docker, regions: { 'lnd-atl': {} }, actions: { find: { verification: { url: 'http://127.0.0.1:1/', headers: {} } } } },
    };
    const v = await cloud('POST', '/versions', { display_name: 'verified', config: { matchmaker: { game_modes } } });
    expect(v.status, v.text).toBe(200);
    const client = new RivetClient({ environment: emu.endpoint, token: emu.tokens.cloud });
    await client.cloud.games.namespaces.updateGameNamespaceVersion(GAME_ID, NAMESPACE_ID, { versionId: v.json.version_id });
    const call = (path: string, body: unknown) => emu.call('POST', `/matchmaker/lobbies/${path}`, { token: emu.tokens.public, body, headers: { 'user-agent': 'test-agent/1' } });

    const found = await call('find', { game_modes: ['open'], tags: { map: 'dust' }, verification_data: { ticket: 7 } });
    expect(found.status, found.text).toBe(200);
    const seen = received.at(-1)!;
    expect(seen.url).toBe('/allow');
    expect(seen.headers['x-game-key']).toBe('secret');
    expect(seen.headers['content-type']).toBeUndefined();
    expect(seen.body).toEqual({
      verification_data: { ticket: 7 },
      game: {
        namespace_id: NAMESPACE_ID, game_mode_id: expect.any(String), game_mode_name_id: 'open', lobby: null, state: null, config: null,
        tags: { map: 'dust' }, dynamic_max_players: null,
      },
      clients: { '127.0.0.1': { user_agent: 'test-agent/1', latitude: null, longitude: null } },
      join_kind: 'Normal',
      kind: 'Find',
    });
    // Join: the lobby's own join config, which refuses; the body names the lobby.
    const joined = await call('join', { lobby_id: found.json.lobby.lobby_id });
    expectErrorShape(joined, 400, 'MATCHMAKER_VERIFICATION_FAILED');
    expect(received.at(-1)!.body).toMatchObject({ kind: 'Join', game: { lobby: { lobby_id: found.json.lobby.lobby_id, region_name_id: 'lnd-atl', is_closed: false } } });
    // Create: its config is sent.
    const made = await call('create', { game_mode: 'open', lobby_config: { round: 1 } });
    expect(made.status, made.text).toBe(200);
    expect(received.at(-1)!.body).toMatchObject({ kind: 'Create', game: { config: { round: 1 } } });
    expectErrorShape(await call('find', { game_modes: ['closed'] }), 400, 'MATCHMAKER_VERIFICATION_FAILED');
    expectErrorShape(await call('find', { game_modes: ['gone'] }), 400, 'MATCHMAKER_VERIFICATION_REQUEST_FAILED');
  });
});

describe("a process's first matchmaker request of a namespace", () => {
  const cloudOf = (emu: TestEmulator) => (method: string, path: string, body?: unknown) =>
    emu.call(method, `/cloud/games/${GAME_ID}${path}`, { token: emu.tokens.cloud, ...(body === undefined ? {} : { body }) });

  it('makes the idle lobbies its version keeps where none run (they stopped with the last serve), in every region', async () => {
    const dataDir = tempDir();
    const first = await startTestEmulator({}, { dataDir });
    let second: TestEmulator | undefined;
    try {
      const cloud = cloudOf(first);
      const build = await cloud('POST', '/builds', { display_name: 'idle', image_tag: 'server:idle', image_file: { path: 'server.tar', content_length: 4 } });
      expect((await fetch(build.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 1) })).status).toBe(200);
      expect((await first.call('POST', `/cloud/uploads/${build.json.upload_id}/complete`, { token: first.tokens.cloud, body: {} })).status).toBe(200);
      const solo = { max_players: 1, regions: { 'lnd-atl': { idle_lobbies: { min: 1, max: 1 } }, 'lnd-fra': { idle_lobbies: { min: 1, max: 1 } } }, docker: { image_id: build.json.build_id } };
      const v = await cloud('POST', '/versions', { display_name: 'idle-1', config: { matchmaker: { game_modes: { solo } } } });
      expect(v.status, v.text).toBe(200);
      expect((await cloud('PUT', `/namespaces/${NAMESPACE_ID}/version`, { version_id: v.json.version_id })).status).toBe(200);
      // The deploy made one in each region; they stop, as with a serve that ended.
      const made = (await cloud('GET', `/namespaces/${NAMESPACE_ID}/logs/lobbies`)).json.lobbies as ListedLobby[];
      expect(made).toHaveLength(2);
      for (const lobby of made) await stopLobby(first.endpoint, lobby.lobby_id);
      await first.close();

      second = await startTestEmulator({}, { dataDir });
      const found = await second.call('POST', '/matchmaker/lobbies/find', { token: second.tokens.public, body: { game_modes: ['solo'], regions: ['lnd-atl'] } });
      expect(found.status, found.text).toBe(200);
      await second.services.idleLobbies.settled();
      const listed = (await cloudOf(second)('GET', `/namespaces/${NAMESPACE_ID}/logs/lobbies`)).json.lobbies as ListedLobby[];
      const running = listed.filter((l) => l.status.stopped === undefined);
      // lnd-fra's is the first request's doing (the update after a find covers only its own region).
      expect(running.filter((l) => l.region_id === regionUuid('lnd-fra'))).toHaveLength(1);
      expect(running.filter((l) => l.region_id === regionUuid('lnd-atl')).length).toBeGreaterThanOrEqual(1);
    } finally {
      await (second ?? first).stop();
    }
  });

  it('of a version that keeps no idle lobby reads the namespace once, for itself', async () => {
    const emu = await startTestEmulator();
    const current = vi.spyOn(LobbyVersions.prototype, 'current');
    try {
      for (let i = 0; i < 2; i++) {
        const made = await emu.call('POST', '/matchmaker/lobbies/create', { token: emu.tokens.public, body: { game_mode: 'default' } });
        expect(made.status, made.text).toBe(200);
        await emu.services.idleLobbies.settled();
      }
      // Each create's call is for the row this process read last (read by the first, kept for the second, whose insert
      // checks it is still that one); no fresh read for idle lobbies the version does not keep.
      expect(current.mock.calls.map(([, opts]) => opts?.seen === true)).toEqual([true, true]);
    } finally {
      current.mockRestore();
      await emu.stop();
    }
  });
});
