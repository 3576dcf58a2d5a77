// The matchmaker rules of a version (issue 34; SERVICE-FACTS "Versions, namespaces…" §3 and §6), over real HTTP and
// the official client: idle lobbies made by a deploy answer the first find and are made again to keep the min; a lobby
// that empties stays up idle up to the max, the longest-idle beyond it stop; the namespace's lobby_count_max and
// per-client bound from its mm-config.
import { RivetClient } from '@rivet-gg/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/emulator/services/clock.js';
import { GAME_ID, NAMESPACE_ID, regionUuid } from '../../src/emulator/services/ids.js';
import { expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

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
