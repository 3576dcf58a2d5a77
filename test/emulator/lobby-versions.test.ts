// Lobbies run their version (SERVICE-FACTS "Versions, namespaces…" §2 and §6), over real HTTP and the official
// client: after a deploy, find, create and list use the namespace's new version (its game modes, max players,
// regions, tags, actions, env, ports and tier); a lobby made before keeps its own version, is joinable by id, is no
// longer listed, and stops when it empties.
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { RivetClient } from '@rivet-gg/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, NAMESPACE_ID, VERSION_ID } from '../../src/emulator/services/ids.js';
import { SqliteStore } from '../../src/emulator/stores/sqlite.js';
import { admit, expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { lobbyRow } from '../helpers/lobby-row.js';

describe('lobbies run their version', () => {
  let emu: TestEmulator;
  const cloud = (method: string, path: string, body?: unknown) => emu.call(method, `/cloud/games/${GAME_ID}${path}`, { token: emu.tokens.cloud, ...(body === undefined ? {} : { body }) });
  const find = (body: unknown) => emu.call('POST', '/matchmaker/lobbies/find', { token: emu.tokens.public, body });
  const envOf = async (lobbyId: string) => (await emu.call('GET', `/_emulator/lobbies/${lobbyId}/env`)).json.env as Record<string, string>;

  /** A version whose one game mode, `ranked`, runs an uploaded build of the game. */
  const rankedVersion = async (): Promise<string> => {
    const created = await cloud('POST', '/builds', { display_name: 'ranked', image_tag: 'server:ranked', image_file: { path: 'server.tar', content_length: 4 } });
    expect(created.status, created.text).toBe(200);
    expect((await fetch(created.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 1) })).status).toBe(200);
    expect((await emu.call('POST', `/cloud/uploads/${created.json.upload_id}/complete`, { token: emu.tokens.cloud, body: {} })).status).toBe(200);
    const ranked = {
      max_players: 2,
      regions: { 'lnd-fra': { tier: 'basic-1d2' } },
      docker: { image_id: created.json.build_id, env: { FOO: 'bar' }, ports: { game: { port: 7777, protocol: 'udp' } } },
    };
    const v = await cloud('POST', '/versions', { display_name: 'ranked-1', config: { matchmaker: { game_modes: { ranked } } } });
    expect(v.status, v.text).toBe(200);
    return v.json.version_id as string;
  };

  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu?.stop());

  it('a deploy changes what find, create and list see; an older lobby keeps its version, is joinable by id and not listed', async () => {
    // Before: the seeded 0.0.1, as the emulator always behaved (tags allowed).
    const older = await find({ game_modes: ['default'], tags: { map: 'dust' } });
    expect(older.status, older.text).toBe(200);
    const olderId = older.json.lobby.lobby_id as string;
    await admit(emu.endpoint, older.json);
    expect(await envOf(olderId)).toMatchObject({ RIVET_VERSION_ID: VERSION_ID, RIVET_VERSION_NAME: '0.0.1', RIVET_NAMESPACE_NAME: 'prod', RIVET_CPU: '1000' });

    const ranked = await rankedVersion();
    const client = new RivetClient({ environment: emu.endpoint, token: emu.tokens.cloud });
    await client.cloud.games.namespaces.updateGameNamespaceVersion(GAME_ID, NAMESPACE_ID, { versionId: ranked });

    // The old game mode is gone: the same error as any unknown one, naming the version's.
    const gone = await find({ game_modes: ['default'] });
    expectErrorShape(gone, 400, 'MATCHMAKER_GAME_MODE_NOT_FOUND');
    expect(gone.json.message).toContain('this namespace has ranked');
    // What the version says of ranked, each as production answers it.
    const tagged = await find({ game_modes: ['ranked'], tags: { map: 'dust' } });
    expectErrorShape(tagged, 400, 'MATCHMAKER_TAGS_DISABLED');
    expect(tagged.json.message).toBe('Tags are not enabled for this game mode: ranked');
    expectErrorShape(await find({ game_modes: ['ranked'], max_players: 2 }), 400, 'MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED');
    expectErrorShape(await find({ game_modes: ['ranked'], regions: ['lnd-atl'] }), 400, 'MATCHMAKER_AUTO_CREATE_FAILED');
    expectErrorShape(await emu.call('POST', '/matchmaker/lobbies/create', { token: emu.tokens.public, body: { game_mode: 'ranked' } }), 400, 'MATCHMAKER_CUSTOM_LOBBIES_DISABLED');

    // A find makes a lobby of the new version, in the game mode's region, with its env, port and tier.
    const pub = new RivetClient({ environment: emu.endpoint, token: emu.tokens.public });
    const found = await pub.matchmaker.lobbies.find({ gameModes: ['ranked'] });
    expect(found.lobby.region.regionId).toBe('lnd-fra');
    expect(Object.keys(found.ports)).toEqual(['game']);
    const env = await envOf(found.lobby.lobbyId);
    expect(env).toMatchObject({
      FOO: 'bar',
      RIVET_VERSION_ID: ranked,
      RIVET_VERSION_NAME: 'ranked-1',
      RIVET_NAMESPACE_NAME: 'prod',
      RIVET_GAME_MODE_NAME: 'ranked',
      RIVET_MAX_PLAYERS_NORMAL: '2',
      RIVET_CPU: '500',
      RIVET_MEMORY: String(919 * 1024 * 1024),
      PORT_game: String(found.ports.game!.port),
    });
    // The version's env comes first, production's variables after it.
    expect(Object.keys(env)[0]).toBe('FOO');

    // A find never lands in the older lobby; list shows the new version's game modes and lobbies only.
    const list = (await emu.call('GET', '/matchmaker/lobbies/list', { token: emu.tokens.public })).json;
    expect(list.game_modes).toEqual([{ game_mode_id: 'ranked' }]);
    expect(list.lobbies.map((l: { lobby_id: string }) => l.lobby_id)).toEqual([found.lobby.lobbyId]);

    // Joined by id, the older lobby still answers (its own version's join config), and still runs its version.
    const joined = await emu.call('POST', '/matchmaker/lobbies/join', { token: emu.tokens.public, body: { lobby_id: olderId } });
    expect(joined.status, joined.text).toBe(200);
    expect(await envOf(olderId)).toMatchObject({ RIVET_VERSION_NAME: '0.0.1', RIVET_LOBBY_TAGS: '{"map":"dust"}' });

    // The history names each lobby's own version and tier.
    const exported = await cloud('POST', '/matchmaker/lobbies/export-history', { query_start: 0, query_end: Date.now() + 60_000 });
    const csv = await (await fetch(exported.json.url)).text();
    const rows = csv.trim().split('\n').map((line) => line.split(','));
    const row = (id: string) => rows.find((r) => r[0] === id)!;
    expect(row(found.lobby.lobbyId).slice(2, 8)).toEqual(['prod', expect.any(String), 'lnd-fra', 'basic-1d2', ranked, 'ranked-1']);
    expect(row(olderId).slice(5, 8)).toEqual(['basic-1d1', VERSION_ID, '0.0.1']);

    // A measured lobby's allocated memory is its own tier's: 919 MiB for ranked in lnd-fra (basic-1d2), 1,838 for
    // 0.0.1's (basic-1d1). Each is written as a replica that ran its server keeps it: an owner, and samples.
    const store = SqliteStore.open(join(emu.dataDir, 'emulator.db'));
    const measured = { ranked: randomUUID(), older: randomUUID() };
    try {
      const now = Date.now();
      const row = { namespace_id: NAMESPACE_ID, region_name: 'Frankfurt', max_players: 2, owner: 'r-elsewhere', owner_pid: 1, owner_start: 1 };
      const seat = () => ({ player_id: randomUUID(), source_ip: '', registration_ms: 120_000, connected: true });
      await store.insertLobby(lobbyRow({ ...row, lobby_id: measured.ranked, game_mode: 'ranked', region_id: 'lnd-fra', version_id: ranked }, now), seat());
      await store.insertLobby(lobbyRow({ ...row, lobby_id: measured.older }, now), seat());
      for (const id of Object.values(measured)) await store.setLobbySamples(id, JSON.stringify([{ ts: now, cpu: 1.5, memory: 40_000_000 }]));
    } finally {
      await store.close();
    }
    const metrics = async (id: string) => (await cloud('GET', `/namespaces/${NAMESPACE_ID}/logs/lobbies/${id}`)).json.metrics;
    expect(await metrics(measured.ranked)).toMatchObject({ allocated_memory: 919 });
    expect(await metrics(measured.older)).toMatchObject({ allocated_memory: 1838 });
    // Stopped through the admin route, it answers the same.
    expect((await emu.call('POST', `/_emulator/lobbies/${measured.ranked}/stop`, { body: {} })).json).toMatchObject({ metrics: { allocated_memory: 919 } });
  });

  it('the deploy leaves an occupied older lobby running; it stops once its last player is gone', async () => {
    const staging = (await cloud('GET', '')).json.game.namespaces.find((n: { name_id: string }) => n.name_id === 'staging').namespace_id as string;
    const token = (await cloud('POST', `/namespaces/${staging}/tokens/public`)).json.token as string;
    const made = await emu.call('POST', '/matchmaker/lobbies/find', { token, body: { game_modes: ['duos'] } });
    expect(made.status, made.text).toBe(200);
    const lobbyId = made.json.lobby.lobby_id as string;
    await admit(emu.endpoint, made.json);
    const versions = (await cloud('GET', '')).json.game.versions as { version_id: string; display_name: string }[];
    const ranked = versions.find((v) => v.display_name === 'ranked-1')!.version_id;
    expect((await cloud('PUT', `/namespaces/${staging}/version`, { version_id: ranked })).status).toBe(200);
    const env = await envOf(lobbyId);
    expect(env).toMatchObject({ RIVET_VERSION_NAME: '0.0.1', RIVET_NAMESPACE_NAME: 'staging' });
    // Its player leaves: the lobby stops (production's idle update stops an emptied outdated lobby).
    const left = await emu.call('POST', '/matchmaker/players/disconnected', { token: env.RIVET_TOKEN, body: { player_token: made.json.player.token } });
    expect(left.status, left.text).toBe(200);
    expectErrorShape(await emu.call('GET', `/_emulator/lobbies/${lobbyId}/env`), 400, 'MATCHMAKER_LOBBY_STOPPED');
  });

  it("a version may name production's regions (lnd-sfo) beyond the game's own: its lobbies run there; an unknown region is still refused", async () => {
    const bad = await cloud('POST', '/versions/validate', { display_name: 'west-0', config: { matchmaker: { docker: { image_id: VERSION_ID }, game_modes: { west: { regions: { 'lnd-nowhere': {} } } } } } });
    expect(bad.json.errors.map((e: { path: string[] }) => e.path.join('.'))).toEqual(['config.matchmaker.game-modes.*west*.regions.0.invalid']);
    const created = await cloud('POST', '/builds', { display_name: 'west', image_tag: 'server:west', image_file: { path: 'server.tar', content_length: 4 } });
    expect((await fetch(created.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 2) })).status).toBe(200);
    expect((await emu.call('POST', `/cloud/uploads/${created.json.upload_id}/complete`, { token: emu.tokens.cloud, body: {} })).status).toBe(200);
    const config = { matchmaker: { docker: { image_id: created.json.build_id }, game_modes: { west: { regions: { 'lnd-sfo': {}, 'lnd-syd': {} } } } } };
    const v = await cloud('POST', '/versions', { display_name: 'west-1', config });
    expect(v.status, v.text).toBe(200);
    const staging = (await cloud('GET', '')).json.game.namespaces.find((n: { name_id: string }) => n.name_id === 'staging').namespace_id as string;
    expect((await cloud('PUT', `/namespaces/${staging}/version`, { version_id: v.json.version_id })).status).toBe(200);
    const token = (await cloud('POST', `/namespaces/${staging}/tokens/public`)).json.token as string;
    const found = await emu.call('POST', '/matchmaker/lobbies/find', { token, body: { game_modes: ['west'], regions: ['lnd-sfo'] } });
    expect(found.status, found.text).toBe(200);
    expect(await envOf(found.json.lobby.lobby_id)).toMatchObject({ RIVET_REGION_NAME: 'lnd-sfo', RIVET_NAMESPACE_NAME: 'staging' });
    // With no region named, the game mode's first.
    const any = await emu.call('POST', '/matchmaker/lobbies/find', { token, body: { game_modes: ['west'] } });
    expect(any.status, any.text).toBe(200);
    expect((await envOf(any.json.lobby.lobby_id)).RIVET_REGION_NAME).toMatch(/^lnd-(sfo|syd)$/);
    expectErrorShape(await emu.call('POST', '/matchmaker/lobbies/find', { token, body: { game_modes: ['west'], regions: ['lnd-nowhere'] } }), 400, 'MATCHMAKER_REGION_NOT_FOUND');
    // The regions list and the lobby list give the regions the version's game modes run in, not the game's.
    const regions = (await emu.call('GET', '/matchmaker/regions', { token })).json.regions as { region_id: string; region_display_name: string }[];
    expect(regions.map((r) => [r.region_id, r.region_display_name])).toEqual([['lnd-sfo', 'San Francisco'], ['lnd-syd', 'Sydney']]);
    const listed = (await emu.call('GET', '/matchmaker/lobbies/list', { token })).json.regions as { region_id: string }[];
    expect(listed.map((r) => r.region_id)).toEqual(['lnd-sfo', 'lnd-syd']);
  });
});

describe('a create after another process deployed or set the mm-config', () => {
  let emu: TestEmulator;
  const cloud = (method: string, path: string, body?: unknown) => emu.call(method, `/cloud/games/${GAME_ID}${path}`, { token: emu.tokens.cloud, ...(body === undefined ? {} : { body }) });
  const create = (body: unknown) => emu.call('POST', '/matchmaker/lobbies/create', { token: emu.tokens.public, body });

  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu?.stop());

  it('uses them at once: the row a create was made from is checked as it inserts, and a refusal from an older one is checked again', async () => {
    const build = await cloud('POST', '/builds', { display_name: 'arena', image_tag: 'server:arena', image_file: { path: 'server.tar', content_length: 4 } });
    expect((await fetch(build.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 1) })).status).toBe(200);
    expect((await emu.call('POST', `/cloud/uploads/${build.json.upload_id}/complete`, { token: emu.tokens.cloud, body: {} })).status).toBe(200);
    const arenaMode = { docker: { image_id: build.json.build_id }, actions: { create: { enable_public: true } } };
    const v = await cloud('POST', '/versions', { display_name: 'arena-1', config: { matchmaker: { game_modes: { arena: arenaMode } } } });
    expect(v.status, v.text).toBe(200);
    const versionId = v.json.version_id as string;
    // This process reads the namespace's row (0.0.1, no row yet) with its first create.
    expect((await create({ game_mode: 'default' })).status).toBe(200);
    // Another process (a replica on the same store) deploys arena-1 and, later, lowers lobby_count_max.
    const other = SqliteStore.open(join(emu.dataDir, 'emulator.db'));
    const row = { namespace_id: NAMESPACE_ID, game_id: GAME_ID, name_id: 'prod', display_name: 'Production', version_id: versionId, create_ts: Date.now(), lobby_count_max: 128, max_players_per_client: null };
    try {
      expect(await other.deployVersion(row, Date.now())).toBe(true);
      // arena is not in the row this process read last: the refusal is checked against a fresh read, which has it.
      const arena = await create({ game_mode: 'arena' });
      expect(arena.status, arena.text).toBe(200);
      const env = (await emu.call('GET', `/_emulator/lobbies/${arena.json.lobby.lobby_id}/env`)).json.env;
      expect(env).toMatchObject({ RIVET_VERSION_ID: versionId, RIVET_GAME_MODE_NAME: 'arena' });
      expectErrorShape(await create({ game_mode: 'default' }), 400, 'MATCHMAKER_GAME_MODE_NOT_FOUND');
      // Two lobbies run (default's and arena's): a bound of 2 set elsewhere refuses the next, though this process
      // read 128; the insert saw the row change and the create was made again from a fresh read.
      await other.putNamespace({ ...row, lobby_count_max: 2 });
      expectErrorShape(await create({ game_mode: 'arena' }), 400, 'MATCHMAKER_TOO_MANY_LOBBIES');
      await other.putNamespace({ ...row, lobby_count_max: 3 });
      expect((await create({ game_mode: 'arena' })).status).toBe(200);
    } finally {
      await other.close();
    }
  });
});

describe("a lobby's three player counts (SERVICE-FACTS, client routes)", () => {
  let emu: TestEmulator;
  const cloud = (method: string, path: string, body?: unknown) => emu.call(method, `/cloud/games/${GAME_ID}${path}`, { token: emu.tokens.cloud, ...(body === undefined ? {} : { body }) });
  const client = (path: string, body?: unknown) => emu.call(body === undefined ? 'GET' : 'POST', `/matchmaker/lobbies/${path}`, { token: emu.tokens.public, ...(body === undefined ? {} : { body }) });
  const envOf = async (lobbyId: string) => (await emu.call('GET', `/_emulator/lobbies/${lobbyId}/env`)).json.env as Record<string, string>;

  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu?.stop());

  it('find fills a lobby to max_players, a join by id to max_players_direct; env and list give all three; a dynamic max sets normal and direct', async () => {
    const build = await cloud('POST', '/builds', { display_name: 'duel', image_tag: 'server:duel', image_file: { path: 'server.tar', content_length: 4 } });
    expect((await fetch(build.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 3) })).status).toBe(200);
    expect((await emu.call('POST', `/cloud/uploads/${build.json.upload_id}/complete`, { token: emu.tokens.cloud, body: {} })).status).toBe(200);
    const duel = {
      max_players: 2, max_players_direct: 3, max_players_party: 5, allow_dynamic_max_players: true,
      docker: { image_id: build.json.build_id }, actions: { create: { enable_public: true } },
    };
    const v = await cloud('POST', '/versions', { display_name: 'duel-1', config: { matchmaker: { game_modes: { duel } } } });
    expect(v.status, v.text).toBe(200);
    expect((await cloud('PUT', `/namespaces/${NAMESPACE_ID}/version`, { version_id: v.json.version_id })).status).toBe(200);

    // Two finds fill the lobby for finds; the third makes another.
    const finds = [];
    for (let i = 0; i < 3; i++) {
      const found = await client('find', { game_modes: ['duel'] });
      expect(found.status, found.text).toBe(200);
      await admit(emu.endpoint, found.json);
      finds.push(found.json.lobby.lobby_id as string);
    }
    const [lobbyId] = finds;
    expect(finds[1]).toBe(lobbyId);
    expect(finds[2]).not.toBe(lobbyId);
    // A join by id takes the third place (direct), and is refused the fourth.
    expect((await client('join', { lobby_id: lobbyId })).status).toBe(200);
    const full = expectErrorShape(await client('join', { lobby_id: lobbyId }), 400, 'MATCHMAKER_LOBBY_FULL');
    expect(full.message).toBe(`Lobby ${lobbyId} is full: 3 players at most.`);
    expect(await envOf(lobbyId!)).toMatchObject({ RIVET_MAX_PLAYERS_NORMAL: '2', RIVET_MAX_PLAYERS_DIRECT: '3', RIVET_MAX_PLAYERS_PARTY: '5' });
    const listed = (await client('list')).json.lobbies.find((l: { lobby_id: string }) => l.lobby_id === lobbyId);
    expect(listed).toMatchObject({ max_players_normal: 2, max_players_direct: 3, max_players_party: 5 });

    // A create's own max_players (at most the larger of the two, 3) is its normal and direct count; party stays.
    expectErrorShape(await client('create', { game_mode: 'duel', max_players: 4 }), 400, 'MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID');
    const solo = await client('create', { game_mode: 'duel', max_players: 1 });
    expect(solo.status, solo.text).toBe(200);
    const soloId = solo.json.lobby.lobby_id as string;
    expect(await envOf(soloId)).toMatchObject({ RIVET_MAX_PLAYERS_NORMAL: '1', RIVET_MAX_PLAYERS_DIRECT: '1', RIVET_MAX_PLAYERS_PARTY: '5' });
    expectErrorShape(await client('join', { lobby_id: soloId }), 400, 'MATCHMAKER_LOBBY_FULL');
  });
});
