// A game's namespaces as production keeps them (SERVICE-FACTS "Versions, namespaces…" §2), over real HTTP, checked
// against the published spec and driven through the official client: the two every game starts with, create,
// deploy a version and its history, the matchmaker config, and tokens labelled by the namespace's name id that
// reach that namespace's lobbies only.
import { RivetClient } from '@rivet-gg/api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, NAMESPACE_ID, VERSION_ID } from '../../src/emulator/services/ids.js';
import { type Call, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { SPEC_PRESENT, Spec } from '../conformance/openapi.js';

const OPERATIONS = [
  'cloud_games_getGameById',
  'cloud_games_namespaces_createGameNamespace',
  'cloud_games_namespaces_getGameNamespaceById',
  'cloud_games_namespaces_GetGameNamespaceVersionHistoryList',
  'cloud_games_namespaces_validateGameNamespaceMatchmakerConfig',
  'cloud_games_namespaces_createGameNamespaceTokenPublic',
  'cloud_games_namespaces_createGameNamespaceTokenDevelopment',
];

describe('namespaces', () => {
  let emu: TestEmulator;
  const spec = SPEC_PRESENT ? new Spec(undefined, OPERATIONS) : undefined;
  const conforms = (res: Call, operation: string) => {
    if (spec) expect(spec.checkResponse(spec.operation(operation), { status: res.status, responseHeaders: Object.fromEntries(res.headers), responseBody: res.text }), res.text).toEqual([]);
    return res;
  };
  const cloud = (method: string, path: string, body?: unknown) => emu.call(method, `/cloud/games/${GAME_ID}${path}`, { token: emu.tokens.cloud, ...(body === undefined ? {} : { body }) });
  /** A version of the game with no build of its own is not creatable; one with an uploaded build is. */
  const newVersion = async (name: string): Promise<string> => {
    const created = await cloud('POST', '/builds', { display_name: name, image_tag: `server:${name.replace(/\W/g, '-')}`, image_file: { path: 'server.tar', content_length: 4 } });
    expect(created.status, created.text).toBe(200);
    expect((await fetch(created.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 1) })).status).toBe(200);
    expect((await emu.call('POST', `/cloud/uploads/${created.json.upload_id}/complete`, { token: emu.tokens.cloud, body: {} })).status).toBe(200);
    // Custom lobbies public: the token test below creates one in the namespace this version is deployed to.
    const config = { matchmaker: { docker: { image_id: created.json.build_id }, game_modes: { default: { actions: { create: { enable_public: true } } } } } };
    const v = await cloud('POST', '/versions', { display_name: name, config });
    expect(v.status, v.text).toBe(200);
    return v.json.version_id as string;
  };

  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu?.stop());

  it('a game starts with Production (prod) and Staging (staging) on 0.0.1, sorted by display name, with production\'s matchmaker defaults', async () => {
    const game = conforms(await cloud('GET', ''), 'cloud_games_getGameById').json.game;
    expect(game.namespaces.map((n: Record<string, string>) => [n.display_name, n.name_id, n.version_id])).toEqual([
      ['Production', 'prod', VERSION_ID],
      ['Staging', 'staging', VERSION_ID],
    ]);
    expect(game.namespaces[0].namespace_id).toBe(NAMESPACE_ID);
    const staging = game.namespaces[1].namespace_id as string;
    const got = conforms(await cloud('GET', `/namespaces/${staging}`), 'cloud_games_namespaces_getGameNamespaceById');
    expect(got.json.namespace).toMatchObject({ namespace_id: staging, name_id: 'staging', display_name: 'Staging', version_id: VERSION_ID });
    expect(got.json.namespace.config.matchmaker).toEqual({
      lobby_count_max: 128,
      max_players_per_client: 8,
      max_players_per_client_vpn: 4,
      max_players_per_client_proxy: 2,
      max_players_per_client_tor: 2,
      max_players_per_client_hosting: 2,
    });
    // Nothing was deployed yet: no history.
    expect(conforms(await cloud('GET', `/namespaces/${staging}/version-history`), 'cloud_games_namespaces_GetGameNamespaceVersionHistoryList').json).toEqual({ versions: [] });
  });

  it('create: validated as production (paths), on a version of the game; an unknown version is 400 VERSION_NOT_FOUND, not 500', async () => {
    const bad = conforms(await cloud('POST', '/namespaces', { display_name: ' QA', version_id: VERSION_ID, name_id: 'QA--x' }), 'cloud_games_namespaces_createGameNamespace');
    expect(bad.status).toBe(400);
    expect(bad.json).toMatchObject({ code: 'VALIDATION_ERROR', message: 'The given resource did not pass validation: name-id.invalid, display-name.invalid' });
    const taken = await cloud('POST', '/namespaces', { display_name: 'Again', version_id: VERSION_ID, name_id: 'staging' });
    expect(taken.json.message).toBe('The given resource did not pass validation: name-id.not-unique');
    const tooLong = await cloud('POST', '/namespaces', { display_name: 'Long', version_id: VERSION_ID, name_id: 'a'.repeat(17) });
    expect(tooLong.json.message).toBe('The given resource did not pass validation: name-id.too-long');
    const unknown = conforms(await cloud('POST', '/namespaces', { display_name: 'QA', version_id: '00000000-0000-4000-8000-000000000001', name_id: 'qa' }), 'cloud_games_namespaces_createGameNamespace');
    expect(unknown.status).toBe(400);
    expect(unknown.json).toMatchObject({ code: 'VERSION_NOT_FOUND' });
    const created = conforms(await cloud('POST', '/namespaces', { display_name: 'QA', version_id: VERSION_ID, name_id: 'qa' }), 'cloud_games_namespaces_createGameNamespace');
    expect(created.status, created.text).toBe(200);
    const game = (await cloud('GET', '')).json.game;
    expect(game.namespaces.map((n: Record<string, string>) => n.name_id)).toEqual(['prod', 'qa', 'staging']);
    expect(game.namespaces[1].namespace_id).toBe(created.json.namespace_id);
    // Creating writes no history.
    expect((await cloud('GET', `/namespaces/${created.json.namespace_id}/version-history`)).json.versions).toEqual([]);
    expect((await cloud('GET', '/namespaces/00000000-0000-4000-8000-000000000002')).status).toBe(404);
  });

  it('deploys through the official client: the namespace runs the version, each change a history row, newest first; the same version again writes none', async () => {
    const client = new RivetClient({ environment: emu.endpoint, token: emu.tokens.cloud });
    const v1 = await newVersion('deploy-one');
    const v2 = await newVersion('deploy-two');
    const staging = (await client.cloud.games.games.getGameById(GAME_ID)).game.namespaces.find((n) => n.nameId === 'staging')!.namespaceId;
    await client.cloud.games.namespaces.updateGameNamespaceVersion(GAME_ID, staging, { versionId: v1 });
    await client.cloud.games.namespaces.updateGameNamespaceVersion(GAME_ID, staging, { versionId: v2 });
    await client.cloud.games.namespaces.updateGameNamespaceVersion(GAME_ID, staging, { versionId: v2 });
    const ns = await client.cloud.games.namespaces.getGameNamespaceById(GAME_ID, staging);
    expect(ns.namespace.versionId).toBe(v2);
    const history = conforms(await cloud('GET', `/namespaces/${staging}/version-history`), 'cloud_games_namespaces_GetGameNamespaceVersionHistoryList').json.versions;
    expect(history.map((h: Record<string, string>) => [h.namespace_id, h.version_id])).toEqual([[staging, v2], [staging, v1]]);
    expect(Date.parse(history[0].deploy_ts)).toBeGreaterThanOrEqual(Date.parse(history[1].deploy_ts));
    expect((await cloud('GET', `/namespaces/${staging}/version-history?limit=1`)).json.versions).toHaveLength(1);
    // Past a thousand deploys, the largest limit answers the newest thousand (production has no bound).
    for (let i = 0; i < 1_000; i++) await cloud('PUT', `/namespaces/${staging}/version`, { version_id: i % 2 === 0 ? v1 : v2 });
    const newest = (await cloud('GET', `/namespaces/${staging}/version-history?limit=999999999`)).json.versions;
    expect(newest).toHaveLength(1_000);
    expect(newest[0].version_id).toBe(v2);
    expect((await cloud('GET', `/namespaces/${staging}/version-history?limit=x`)).json).toMatchObject({ code: 'API_BAD_QUERY_PARAMETER' });
    // prod is untouched.
    expect((await client.cloud.games.namespaces.getGameNamespaceById(GAME_ID, NAMESPACE_ID)).namespace.versionId).toBe(VERSION_ID);
    const unknown = await cloud('PUT', `/namespaces/${staging}/version`, { version_id: '00000000-0000-4000-8000-000000000003' });
    expect(unknown.status).toBe(400);
    expect(unknown.json).toMatchObject({ code: 'VERSION_NOT_FOUND' });
  });

  it('mm-config: validated as production; max_players sets every per-client bound', async () => {
    const path = `/namespaces/${NAMESPACE_ID}/mm-config`;
    const invalid = conforms(await cloud('POST', `${path}/validate`, { lobby_count_max: 40000, max_players: 0 }), 'cloud_games_namespaces_validateGameNamespaceMatchmakerConfig');
    expect(invalid.json.errors.map((e: { path: string[] }) => e.path.join('.'))).toEqual([
      'lobby-count.too-high',
      'max-players.too-low',
      'max-players.client.too-low',
      'max-players.vpn.too-low',
      'max-players.proxy.too-low',
      'max-players.tor.too-low',
      'max-players.hosting.too-low',
    ]);
    expect((await cloud('POST', path, { lobby_count_max: -1, max_players: 4 })).json).toMatchObject({ code: 'CLOUD_INVALID_CONFIG', message: 'The given config was invalid: `lobby_count_max` out of bounds' });
    expect((await cloud('POST', path, { lobby_count_max: 0, max_players: 4 })).json).toMatchObject({ code: 'VALIDATION_ERROR' });
    const set = await cloud('POST', path, { lobby_count_max: 10, max_players: 3 });
    expect(set.status, set.text).toBe(200);
    const mm = (await cloud('GET', `/namespaces/${NAMESPACE_ID}`)).json.namespace.config.matchmaker;
    expect(mm).toEqual({ lobby_count_max: 10, max_players_per_client: 3, max_players_per_client_vpn: 3, max_players_per_client_proxy: 3, max_players_per_client_tor: 3, max_players_per_client_hosting: 3 });
    await cloud('POST', path, { lobby_count_max: 128, max_players: 8 });
  });

  it('tokens are labelled by the name id and reach their own namespace\'s lobbies only', async () => {
    const game = (await cloud('GET', '')).json.game;
    const staging = game.namespaces.find((n: Record<string, string>) => n.name_id === 'staging').namespace_id as string;
    const pub = conforms(await cloud('POST', `/namespaces/${staging}/tokens/public`), 'cloud_games_namespaces_createGameNamespaceTokenPublic').json.token as string;
    expect(pub).toMatch(/^pub_staging\./);
    const dev = conforms(await cloud('POST', `/namespaces/${staging}/tokens/development`, { hostname: '127.0.0.1', ports: { default: { port: 8080, protocol: 'http' } } }), 'cloud_games_namespaces_createGameNamespaceTokenDevelopment');
    expect(dev.json.token).toMatch(/^dev_staging\./);
    expect((await cloud('POST', `/namespaces/${NAMESPACE_ID}/tokens/public`)).json.token).toMatch(/^pub_prod\./);
    expect((await cloud('POST', `/namespaces/${staging}/tokens/development`, { ports: {} })).json).toMatchObject({ code: 'API_BAD_BODY' });
    // A lobby made with staging's token is staging's: prod's list does not show it.
    const made = await emu.call('POST', '/matchmaker/lobbies/create', { token: pub, body: { game_mode: 'default' } });
    expect(made.status, made.text).toBe(200);
    const listed = async (token: string) => (await emu.call('GET', '/matchmaker/lobbies/list', { token })).json.lobbies.map((l: { lobby_id: string }) => l.lobby_id);
    expect(await listed(pub)).toContain(made.json.lobby.lobby_id);
    expect(await listed(emu.tokens.public)).not.toContain(made.json.lobby.lobby_id);
    // Its server's environment names its own namespace and its lobby token acts for it.
    const env = (await emu.call('GET', `/_emulator/lobbies/${made.json.lobby.lobby_id}/env`)).json.env;
    expect(env.RIVET_NAMESPACE_ID).toBe(staging);
    expect(env.RIVET_NAMESPACE_NAME).toBe('staging');
    const ready = await emu.call('POST', '/matchmaker/lobbies/ready', { token: env.RIVET_TOKEN, body: {} });
    expect(ready.status, ready.text).toBeLessThan(300);
    // Another game's namespace is not this game's.
    expect((await cloud('POST', `/namespaces/00000000-0000-4000-8000-000000000004/tokens/public`)).status).toBe(404);
  });
});
