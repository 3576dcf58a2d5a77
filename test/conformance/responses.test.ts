// Every operation replayed against the emulator, in success and failure, each answer validated against the spec.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path, { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEVIATIONS } from '../../src/emulator/deviations.js';
import { GAME_ID, NAMESPACE_ID } from '../../src/emulator/index.js';
import { SqliteStore } from '../../src/emulator/stores/sqlite.js';
import { OPERATIONS, REPO_ROOT, SPEC_PRESENT, Spec } from './openapi.js';
import { admit, type Call, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { lobbyRow } from '../helpers/lobby-row.js';

const UNKNOWN = '12345678-1234-4234-8234-123456789abc';

describe.skipIf(!SPEC_PRESENT)('the emulator answers as rivet-openapi.yml says', () => {
  let spec: Spec;
  let t: TestEmulator;
  let strict: TestEmulator;
  const answered = new Map<string, Set<number>>();

  beforeAll(async () => {
    spec = new Spec();
    t = await startTestEmulator({ partSize: 10, singlePartMax: 20, maxUploadBytes: 1_000_000 });
    // Its lobbies never start within the run: the export of one is MATCHMAKER_LOBBY_NOT_STARTED however slow the
    // machine (it relied on the service's 1 s start delay, which a loaded run could outlast).
    strict = await startTestEmulator({ tokenless: false, startDelayMs: 3_600_000 });
  });
  afterAll(async () => {
    await t.stop();
    await strict.stop();
  });

  /** Sends one request, checks the answer against the operation's spec, and expects `status`. */
  async function replay(
    operationId: (typeof OPERATIONS)[number],
    status: number,
    path: string,
    opts: { token?: string | null; body?: unknown; on?: TestEmulator } = {},
  ): Promise<Call> {
    const op = spec.operation(operationId);
    const res = await (opts.on ?? t).call(op.method, path, opts);
    const problems = spec.checkResponse(op, {
      status: res.status,
      responseHeaders: Object.fromEntries(res.headers),
      responseBody: res.text,
    });
    expect(problems, `${op.method} ${path} → ${res.status} ${res.text}`).toEqual([]);
    expect(res.status, res.text).toBe(status);
    if (!answered.has(operationId)) answered.set(operationId, new Set());
    answered.get(operationId)!.add(status);
    return res;
  }

  const tokens = () => t.tokens;
  const createPath = '/matchmaker/lobbies/create';
  const statsPath = '/matchmaker/players/statistics';
  const logsPath = (lobbyId: string) => `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies/${lobbyId}`;
  const exportPath = `/cloud/games/${GAME_ID}/matchmaker/lobbies/export-history`;
  const buildsPath = (game = GAME_ID) => `/cloud/games/${game}/builds`;
  const completePath = (uploadId: string) => `/cloud/uploads/${uploadId}/complete`;

  let lobbyId = '';

  describe('matchmaker_lobbies_create', () => {
    it('200 with every field, tokenless, and the development token\'s mock', async () => {
      const full = await replay('matchmaker_lobbies_create', 200, createPath, {
        token: tokens().public,
        body: {
          game_mode: 'duos',
          region: 'lnd-fra',
          publicity: 'private',
          tags: { map: 'dust' },
          max_players: 4,
          lobby_config: { round: 3 },
          verification_data: { v: 1 },
          captcha: { hcaptcha: { client_response: 'x' } },
        },
      });
      lobbyId = full.json.lobby.lobby_id;
      await admit(t.endpoint, full.json);
      const tokenless = await replay('matchmaker_lobbies_create', 200, createPath, { token: null, body: { game_mode: 'default' } });
      await admit(t.endpoint, tokenless.json);
      await replay('matchmaker_lobbies_create', 200, createPath, { token: tokens().dev, body: { game_mode: 'squads' } });
    });

    it.each([
      ['unknown game mode', { game_mode: 'solo' }],
      ['unknown region', { game_mode: 'default', region: 'lnd-mars' }],
      ['nine tags', { game_mode: 'default', tags: Object.fromEntries([...Array(9).keys()].map((i) => [`t${i}`, 'v'])) }],
      ['bad publicity', { game_mode: 'default', publicity: 'friends' }],
      ['max_players 0', { game_mode: 'default', max_players: 0 }],
      ['malformed JSON', '{"game_mode":'],
    ])('400 for %s', async (_name, body) => {
      await replay('matchmaker_lobbies_create', 400, createPath, { token: tokens().public, body });
    });

    it('401 without a token where tokenless is off, and for a malformed token; 403 for a cloud token', async () => {
      await replay('matchmaker_lobbies_create', 401, createPath, { on: strict, token: null, body: { game_mode: 'default' } });
      await replay('matchmaker_lobbies_create', 401, createPath, { token: 'cloud.garbage.sig', body: { game_mode: 'default' } });
      await replay('matchmaker_lobbies_create', 403, createPath, { token: tokens().cloud, body: { game_mode: 'default' } });
    });
  });

  describe('matchmaker_players_getStatistics', () => {
    it('200 for the public token and the development token', async () => {
      const res = await replay('matchmaker_players_getStatistics', 200, statsPath, { token: tokens().public });
      expect(res.json.player_count).toBe(2);
      await replay('matchmaker_players_getStatistics', 200, `${statsPath}?exclude_outdated=true`, { token: tokens().public });
      await replay('matchmaker_players_getStatistics', 200, statsPath, { token: tokens().dev });
    });

    it('400 for a bad flag, 401 without a token, 403 for a cloud token', async () => {
      await replay('matchmaker_players_getStatistics', 400, `${statsPath}?exclude_outdated=maybe`, { token: tokens().public });
      await replay('matchmaker_players_getStatistics', 401, statsPath, { token: null });
      await replay('matchmaker_players_getStatistics', 403, statsPath, { token: tokens().cloud });
    });
  });

  describe('cloud_games_namespaces_logs_getNamespaceLobby', () => {
    it('200 for a running lobby with its server\'s metrics, for one no server runs (no metrics), and for a stopped one', async () => {
      // A lobby whose server a replica ran: its samples are in the store, as that replica kept them.
      const store = SqliteStore.open(join(t.dataDir, 'emulator.db'));
      const measured = randomUUID();
      try {
        const now = Date.now();
        await store.insertLobby(
          lobbyRow({ lobby_id: measured, namespace_id: NAMESPACE_ID, owner: 'r-elsewhere', owner_pid: 1, owner_start: 1 }, now),
          { player_id: randomUUID(), source_ip: '', registration_ms: 120_000, connected: true },
        );
        await store.setLobbySamples(measured, JSON.stringify([{ ts: now, cpu: 1.5, memory: 40_000_000 }]));
      } finally {
        await store.close();
      }
      const withMetrics = await replay('cloud_games_namespaces_logs_getNamespaceLobby', 200, logsPath(measured), { token: tokens().cloud });
      expect(withMetrics.json.metrics).toEqual({ job: `lobby-${measured}`, cpu: [1.5], memory: [40_000_000], allocated_memory: 1838 });
      const running = await replay('cloud_games_namespaces_logs_getNamespaceLobby', 200, logsPath(lobbyId), { token: tokens().cloud });
      expect(running.json).not.toHaveProperty('metrics');
      await t.call('POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: { exit_code: 1 } });
      const stopped = await replay('cloud_games_namespaces_logs_getNamespaceLobby', 200, logsPath(lobbyId), { token: tokens().cloud });
      expect(stopped.json.lobby.status.running).toBeNull();
    });

    it('404 for an unknown lobby (production: 500), 400 for a bad id, 401, 403', async () => {
      await replay('cloud_games_namespaces_logs_getNamespaceLobby', 404, logsPath(UNKNOWN), { token: tokens().cloud });
      await replay('cloud_games_namespaces_logs_getNamespaceLobby', 400, logsPath('nope'), { token: tokens().cloud });
      await replay('cloud_games_namespaces_logs_getNamespaceLobby', 401, logsPath(lobbyId), { token: null });
      await replay('cloud_games_namespaces_logs_getNamespaceLobby', 403, logsPath(lobbyId), { token: tokens().public });
    });
  });

  describe('cloud_games_getGameById', () => {
    it('200 with the game\'s regions: each UUID the one lobby logs gives, with its name id and display name', async () => {
      const res = await replay('cloud_games_getGameById', 200, `/cloud/games/${GAME_ID}`, { token: tokens().cloud });
      expect(res.json.game.available_regions.map((r: { region_name_id: string; region_display_name: string }) => `${r.region_display_name} (${r.region_name_id})`)).toEqual([
        'Atlanta (lnd-atl)',
        'Frankfurt (lnd-fra)',
        'Singapore (lnd-sgp)',
      ]);
      const logs = await t.call('GET', logsPath(lobbyId), { token: tokens().cloud });
      const region = res.json.game.available_regions.find((r: { region_id: string }) => r.region_id === logs.json.lobby.region_id);
      expect(region.region_name_id).toBe('lnd-fra');
      await replay('cloud_games_getGameById', 200, `/cloud/games/${GAME_ID}?watch_index=0`, { token: tokens().cloud });
    });

    it('400 for a bad id, 401, 403 for another game and for a namespace token', async () => {
      await replay('cloud_games_getGameById', 400, '/cloud/games/nope', { token: tokens().cloud });
      await replay('cloud_games_getGameById', 401, `/cloud/games/${GAME_ID}`, { token: null });
      await replay('cloud_games_getGameById', 403, `/cloud/games/${UNKNOWN}`, { token: tokens().cloud });
      await replay('cloud_games_getGameById', 403, `/cloud/games/${GAME_ID}`, { token: tokens().public });
    });
  });

  describe('cloud_games_matchmaker_exportMatchmakerLobbyHistory', () => {
    it('200 with a URL to the CSV; 400 for a bad window; 401; 403', async () => {
      const res = await replay('cloud_games_matchmaker_exportMatchmakerLobbyHistory', 200, exportPath, {
        token: tokens().cloud,
        body: { query_start: 0, query_end: Date.now() },
      });
      expect((await fetch(res.json.url)).status).toBe(200);
      await replay('cloud_games_matchmaker_exportMatchmakerLobbyHistory', 400, exportPath, { token: tokens().cloud, body: { query_start: 5, query_end: 1 } });
      await replay('cloud_games_matchmaker_exportMatchmakerLobbyHistory', 401, exportPath, { token: null, body: { query_start: 0, query_end: 1 } });
      await replay('cloud_games_matchmaker_exportMatchmakerLobbyHistory', 403, exportPath, { token: tokens().public, body: { query_start: 0, query_end: 1 } });
    });
  });

  const buildBody = (tag: string, contentLength: number) => ({
    display_name: 'Conformance',
    image_tag: tag,
    image_file: { path: 'image.tar', content_type: 'application/x-tar', content_length: contentLength },
    kind: 'docker_image',
    compression: 'none',
  });

  describe('cloud_games_builds_createGameBuild and cloud_uploads_completeUpload', () => {
    it('200 for one part and for many; the upload completes with 200 {}', async () => {
      await replay('cloud_games_builds_createGameBuild', 200, buildsPath(), { token: tokens().cloud, body: buildBody('conf:single', 5) });
      const data = Buffer.from('0123456789abcdefghijklmnopqrstuvwxy'); // 35 bytes: 4 parts
      const res = await replay('cloud_games_builds_createGameBuild', 200, buildsPath(), { token: tokens().cloud, body: buildBody('conf:multi', data.length) });
      expect(res.json.image_presigned_requests).toHaveLength(4);
      for (const r of res.json.image_presigned_requests) {
        const put = await fetch(r.url, { method: 'PUT', body: data.subarray(r.byte_offset, r.byte_offset + r.content_length) });
        expect(put.status).toBe(200);
      }
      await replay('cloud_uploads_completeUpload', 200, completePath(res.json.upload_id), { token: tokens().cloud, body: {} });
    });

    it('400 for a bad tag, a taken tag, a file too large; 401; 403', async () => {
      await replay('cloud_games_builds_createGameBuild', 400, buildsPath(), { token: tokens().cloud, body: buildBody('Bad Tag', 5) });
      await replay('cloud_games_builds_createGameBuild', 400, buildsPath(), { token: tokens().cloud, body: buildBody('conf:single', 5) });
      await replay('cloud_games_builds_createGameBuild', 400, buildsPath(), { token: tokens().cloud, body: buildBody('conf:huge', 1_000_000) });
      await replay('cloud_games_builds_createGameBuild', 401, buildsPath(), { token: null, body: buildBody('conf:a', 5) });
      await replay('cloud_games_builds_createGameBuild', 403, buildsPath(UNKNOWN), { token: tokens().cloud, body: buildBody('conf:b', 5) });
    });

    it('complete: 400 for a missing part, 404 for an unknown upload, 401, 403', async () => {
      const res = await t.call('POST', buildsPath(), { token: tokens().cloud, body: buildBody('conf:partial', 25) });
      await replay('cloud_uploads_completeUpload', 400, completePath(res.json.upload_id), { token: tokens().cloud, body: {} });
      await replay('cloud_uploads_completeUpload', 404, completePath(UNKNOWN), { token: tokens().cloud, body: {} });
      await replay('cloud_uploads_completeUpload', 401, completePath(res.json.upload_id), { token: null, body: {} });
      await replay('cloud_uploads_completeUpload', 403, completePath(res.json.upload_id), { token: tokens().dev, body: {} });
    });
  });

  describe('cloud_games_namespaces_createGameNamespaceTokenPublic', () => {
    const tokenPath = (game = GAME_ID, namespace = NAMESPACE_ID) => `/cloud/games/${game}/namespaces/${namespace}/tokens/public`;

    it('200 with a public token that the matchmaker takes', async () => {
      const res = await replay('cloud_games_namespaces_createGameNamespaceTokenPublic', 200, tokenPath(), { token: tokens().cloud });
      expect(res.json.token).toMatch(/^pub_/);
      await replay('matchmaker_players_getStatistics', 200, statsPath, { token: res.json.token });
    });

    it('400 for a bad id, 401 without a token, 403 for a namespace token or another game, 404 for an unknown namespace', async () => {
      await replay('cloud_games_namespaces_createGameNamespaceTokenPublic', 400, tokenPath(GAME_ID, 'prod'), { token: tokens().cloud });
      await replay('cloud_games_namespaces_createGameNamespaceTokenPublic', 401, tokenPath(), { token: null });
      await replay('cloud_games_namespaces_createGameNamespaceTokenPublic', 403, tokenPath(), { token: tokens().public });
      await replay('cloud_games_namespaces_createGameNamespaceTokenPublic', 403, tokenPath(UNKNOWN), { token: tokens().cloud });
      await replay('cloud_games_namespaces_createGameNamespaceTokenPublic', 404, tokenPath(GAME_ID, UNKNOWN), { token: tokens().cloud });
    });
  });

  describe('namespaces and versions', () => {
    const ns = (id = NAMESPACE_ID, game = GAME_ID) => `/cloud/games/${game}/namespaces/${id}`;
    let versionId = '';

    it('the game lists its namespaces and versions; a version reads back; an unknown one is 404', async () => {
      const game = await replay('cloud_games_getGameById', 200, `/cloud/games/${GAME_ID}`, { token: tokens().cloud });
      versionId = game.json.game.versions[0].version_id;
      await replay('cloud_games_versions_getGameVersionById', 200, `/cloud/games/${GAME_ID}/versions/${versionId}`, { token: tokens().cloud });
      await replay('cloud_games_versions_getGameVersionById', 404, `/cloud/games/${GAME_ID}/versions/${UNKNOWN}`, { token: tokens().cloud });
      await replay('cloud_games_versions_getGameVersionById', 401, `/cloud/games/${GAME_ID}/versions/${versionId}`, { token: null });
    });

    it('validate, reserve a name and create a version: the errors as paths, the day\'s next name, a version of an uploaded build', async () => {
      const cloud = { token: tokens().cloud };
      const versions = `/cloud/games/${GAME_ID}/versions`;
      const invalid = await replay('cloud_games_versions_validateGameVersion', 200, `${versions}/validate`, { ...cloud, body: { display_name: 'conf', config: { matchmaker: { game_modes: { default: {} } } } } });
      expect(invalid.json.errors).toEqual([{ path: ['config', 'matchmaker', 'game-modes', '*default*', 'no-runtime'] }]);
      await replay('cloud_games_versions_validateGameVersion', 400, `${versions}/validate`, { ...cloud, body: { config: {} } });
      const name = await replay('cloud_games_versions_reserveVersionName', 200, `${versions}/reserve-name`, cloud);
      expect(name.json.version_display_name).toMatch(/^\d{4}\.\d{2}\.\d{2}-\d+$/);
      await replay('cloud_games_versions_reserveVersionName', 401, `${versions}/reserve-name`, { token: null });
      const made = await replay('cloud_games_builds_createGameBuild', 200, buildsPath(), { ...cloud, body: { display_name: 'conf', image_tag: 'conf:v1', image_file: { path: 'a.tar', content_length: 4 } } });
      expect((await fetch(made.json.image_presigned_requests[0].url, { method: 'PUT', body: Buffer.alloc(4, 1) })).status).toBe(200);
      await replay('cloud_uploads_completeUpload', 200, completePath(made.json.upload_id), { ...cloud, body: {} });
      const config = { matchmaker: { docker: { image_id: made.json.build_id }, game_modes: { default: {} } } };
      await replay('cloud_games_versions_createGameVersion', 200, versions, { ...cloud, body: { display_name: name.json.version_display_name, config } });
      await replay('cloud_games_versions_createGameVersion', 400, versions, { ...cloud, body: { display_name: name.json.version_display_name, config } });
    });

    it('create, read, set a version, its history, its matchmaker config; the failures each answer', async () => {
      const cloud = { token: tokens().cloud };
      const made = await replay('cloud_games_namespaces_createGameNamespace', 200, `/cloud/games/${GAME_ID}/namespaces`, { ...cloud, body: { display_name: 'Conf', name_id: 'conf', version_id: versionId } });
      const id = made.json.namespace_id as string;
      await replay('cloud_games_namespaces_createGameNamespace', 400, `/cloud/games/${GAME_ID}/namespaces`, { ...cloud, body: { display_name: 'Conf', name_id: 'conf', version_id: versionId } });
      await replay('cloud_games_namespaces_createGameNamespace', 403, `/cloud/games/${UNKNOWN}/namespaces`, { ...cloud, body: { display_name: 'X', name_id: 'x', version_id: versionId } });
      await replay('cloud_games_namespaces_getGameNamespaceById', 200, ns(id), cloud);
      await replay('cloud_games_namespaces_getGameNamespaceById', 404, ns(UNKNOWN), cloud);
      await replay('cloud_games_namespaces_updateGameNamespaceVersion', 200, `${ns(id)}/version`, { ...cloud, body: { version_id: versionId } });
      await replay('cloud_games_namespaces_updateGameNamespaceVersion', 400, `${ns(id)}/version`, { ...cloud, body: { version_id: UNKNOWN } });
      await replay('cloud_games_namespaces_GetGameNamespaceVersionHistoryList', 200, `${ns(id)}/version-history?limit=5`, cloud);
      await replay('cloud_games_namespaces_GetGameNamespaceVersionHistoryList', 400, `${ns(id)}/version-history?limit=-1`, cloud);
      await replay('cloud_games_namespaces_updateGameNamespaceMatchmakerConfig', 200, `${ns(id)}/mm-config`, { ...cloud, body: { lobby_count_max: 10, max_players: 4 } });
      await replay('cloud_games_namespaces_updateGameNamespaceMatchmakerConfig', 400, `${ns(id)}/mm-config`, { ...cloud, body: { lobby_count_max: 0, max_players: 4 } });
      const dev = await replay('cloud_games_namespaces_createGameNamespaceTokenDevelopment', 200, `${ns(id)}/tokens/development`, { ...cloud, body: { hostname: '127.0.0.1' } });
      expect(dev.json.token).toMatch(/^dev_conf\./);
      await replay('cloud_games_namespaces_createGameNamespaceTokenDevelopment', 400, `${ns(id)}/tokens/development`, { ...cloud, body: {} });
      await replay('cloud_games_namespaces_createGameNamespaceTokenDevelopment', 403, `${ns(id)}/tokens/development`, { token: tokens().public, body: { hostname: 'h' } });
    });
  });

  describe('cloud_games_matchmaker_getLobbyLogs and cloud_games_matchmaker_exportLobbyLogs', () => {
    const linesPath = (lobby: string, query: string) => `/cloud/games/${GAME_ID}/matchmaker/lobbies/${lobby}/logs?${query}`;
    const logExportPath = (lobby: string) => `/cloud/games/${GAME_ID}/matchmaker/lobbies/${lobby}/logs/export`;

    it('200 with lines (and for a watch), a URL to stdout.txt; 400 for a bad stream or index; 401; 403; 404', async () => {
      const created = await t.call('POST', createPath, { token: tokens().public, body: { game_mode: 'default' } });
      const lobby = created.json.lobby.lobby_id as string;
      await t.services.logs.append(lobby, 'std_out', [Buffer.from('hello'), Buffer.from([0xff])]);
      const res = await replay('cloud_games_matchmaker_getLobbyLogs', 200, linesPath(lobby, 'stream=std_out'), { token: tokens().cloud });
      expect(res.json.lines).toHaveLength(2);
      const watched = await replay('cloud_games_matchmaker_getLobbyLogs', 200, linesPath(lobby, 'stream=std_out&watch_index=0'), { token: tokens().cloud });
      expect(watched.json.watch.index).toBe(res.json.watch.index);
      await replay('cloud_games_matchmaker_getLobbyLogs', 400, linesPath(lobby, 'stream=all'), { token: tokens().cloud });
      await replay('cloud_games_matchmaker_getLobbyLogs', 400, linesPath(lobby, 'stream=std_err&watch_index=x'), { token: tokens().cloud });
      await replay('cloud_games_matchmaker_getLobbyLogs', 401, linesPath(lobby, 'stream=std_out'), { token: null });
      await replay('cloud_games_matchmaker_getLobbyLogs', 403, linesPath(lobby, 'stream=std_out'), { token: tokens().public });
      await replay('cloud_games_matchmaker_getLobbyLogs', 404, linesPath(UNKNOWN, 'stream=std_out'), { token: tokens().cloud });

      const exported = await replay('cloud_games_matchmaker_exportLobbyLogs', 200, logExportPath(lobby), { token: tokens().cloud, body: { stream: 'std_out' } });
      expect((await fetch(exported.json.url)).status).toBe(200);
      await replay('cloud_games_matchmaker_exportLobbyLogs', 400, logExportPath(lobby), { token: tokens().cloud, body: { stream: 'stdout' } });
      await replay('cloud_games_matchmaker_exportLobbyLogs', 401, logExportPath(lobby), { token: null, body: { stream: 'std_out' } });
      await replay('cloud_games_matchmaker_exportLobbyLogs', 403, logExportPath(lobby), { token: tokens().public, body: { stream: 'std_out' } });
      await replay('cloud_games_matchmaker_exportLobbyLogs', 404, logExportPath(UNKNOWN), { token: tokens().cloud, body: { stream: 'std_out' } });
    });

    it('400 MATCHMAKER_LOBBY_NOT_STARTED for the export of a lobby whose process never started', async () => {
      const created = await strict.call('POST', createPath, { token: strict.tokens.public, body: { game_mode: 'default' } });
      const res = await replay('cloud_games_matchmaker_exportLobbyLogs', 400, logExportPath(created.json.lobby.lobby_id), {
        token: strict.tokens.cloud,
        body: { stream: 'std_err' },
        on: strict,
      });
      expect(res.json.code).toBe('MATCHMAKER_LOBBY_NOT_STARTED');
    });
  });

  describe('the rest of the matchmaker', () => {
    const findPath = '/matchmaker/lobbies/find';
    const joinPath = '/matchmaker/lobbies/join';
    let seat: Call;
    let lobbyToken = '';

    it('matchmaker_lobbies_find: 200 (created, then found), the mock; 400 in production\'s order; 401', async () => {
      seat = await replay('matchmaker_lobbies_find', 200, findPath, {
        token: tokens().public,
        body: { game_modes: ['squads'], regions: ['lnd-sgp'], tags: { map: 'dust' }, max_players: 3, verification_data: null },
      });
      const again = await replay('matchmaker_lobbies_find', 200, findPath, { token: null, body: { game_modes: ['squads'], regions: ['lnd-sgp'] } });
      expect(again.json.lobby.lobby_id).toBe(seat.json.lobby.lobby_id);
      await replay('matchmaker_lobbies_find', 200, findPath, { token: tokens().dev, body: { game_modes: ['squads'] } });
      for (const [body, code] of [
        [{ game_modes: [] }, 'MATCHMAKER_NO_GAME_MODE_PROVIDED'],
        [{ game_modes: ['solo'] }, 'MATCHMAKER_GAME_MODE_NOT_FOUND'],
        [{ game_modes: ['default'], max_players: 0 }, 'MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID'],
        [{ game_modes: ['default'], regions: ['lnd-mars'] }, 'MATCHMAKER_REGION_NOT_FOUND'],
        [{ game_modes: ['default'], tags: { none: 'such' }, prevent_auto_create_lobby: true }, 'MATCHMAKER_NO_AVAILABLE_LOBBIES'],
        [{ game_modes: 'default' }, 'API_BAD_BODY'],
      ] as const)
        expect((await replay('matchmaker_lobbies_find', 400, findPath, { token: tokens().public, body })).json.code).toBe(code);
      // The empty list is refused before the token is looked at.
      expect((await replay('matchmaker_lobbies_find', 400, findPath, { on: strict, token: null, body: { game_modes: [] } })).json.code).toBe('MATCHMAKER_NO_GAME_MODE_PROVIDED');
      await replay('matchmaker_lobbies_find', 401, findPath, { on: strict, token: null, body: { game_modes: ['default'] } });
    });

    it('matchmaker_lobbies_join: 200 and the mock; 400 for an unknown, a full and a stopped lobby', async () => {
      const lobby = seat.json.lobby.lobby_id;
      await replay('matchmaker_lobbies_join', 200, joinPath, { token: tokens().public, body: { lobby_id: lobby } });
      await replay('matchmaker_lobbies_join', 200, joinPath, { token: tokens().dev, body: { lobby_id: lobby } });
      expect((await replay('matchmaker_lobbies_join', 400, joinPath, { token: tokens().public, body: { lobby_id: lobby } })).json.code).toBe('MATCHMAKER_LOBBY_FULL');
      expect((await replay('matchmaker_lobbies_join', 400, joinPath, { token: tokens().public, body: { lobby_id: UNKNOWN } })).json.code).toBe('MATCHMAKER_LOBBY_NOT_FOUND');
      expect((await replay('matchmaker_lobbies_join', 400, joinPath, { token: tokens().public, body: { lobby_id: lobbyId } })).json.code).toBe('MATCHMAKER_LOBBY_STOPPED');
      await replay('matchmaker_lobbies_join', 401, joinPath, { on: strict, token: null, body: { lobby_id: lobby } });
    });

    it('the lobby token\'s routes: ready, closed, state, players connected and disconnected (200 {}); their refusals', async () => {
      const lobby = seat.json.lobby.lobby_id;
      lobbyToken = (await t.call('GET', `/_emulator/lobbies/${lobby}/env`)).json.env.RIVET_TOKEN;
      await replay('matchmaker_lobbies_ready', 200, '/matchmaker/lobbies/ready', { token: lobbyToken });
      await replay('matchmaker_lobbies_ready', 200, '/matchmaker/lobbies/ready', { token: tokens().dev });
      await replay('matchmaker_lobbies_ready', 401, '/matchmaker/lobbies/ready', { token: tokens().public });
      await replay('matchmaker_lobbies_setClosed', 200, '/matchmaker/lobbies/closed', { token: lobbyToken, body: { is_closed: false } });
      await replay('matchmaker_lobbies_setClosed', 400, '/matchmaker/lobbies/closed', { token: lobbyToken, body: { is_closed: 'yes' } });
      await replay('matchmaker_lobbies_setState', 200, '/matchmaker/lobbies/state', { token: lobbyToken, body: { round: 1, players: ['a'] } });
      await replay('matchmaker_lobbies_setState', 400, '/matchmaker/lobbies/state', { token: lobbyToken, body: JSON.stringify({ big: 'x'.repeat(70_000) }) });
      const state = await replay('matchmaker_lobbies_getState', 200, `/matchmaker/lobbies/${lobby}/state`, { token: tokens().public });
      expect(state.json).toEqual({ round: 1, players: ['a'] });
      await replay('matchmaker_lobbies_getState', 200, `/matchmaker/lobbies/${UNKNOWN}/state`, { token: lobbyToken.length ? tokens().public : null });
      await replay('matchmaker_lobbies_getState', 401, `/matchmaker/lobbies/${lobbyId}/state`, { token: lobbyToken });
      const connected = '/matchmaker/players/connected';
      await replay('matchmaker_players_connected', 200, connected, { token: lobbyToken, body: { player_token: seat.json.player.token } });
      expect((await replay('matchmaker_players_connected', 400, connected, { token: lobbyToken, body: { player_token: seat.json.player.token } })).json.code).toBe('MATCHMAKER_PLAYER_ALREADY_CONNECTED');
      expect((await replay('matchmaker_players_connected', 400, connected, { token: lobbyToken, body: { player_token: 'player.forged.token.sig' } })).json.code).toBe('TOKEN_ERROR');
      await replay('matchmaker_players_connected', 401, connected, { token: lobbyToken, body: { player_token: tokens().public } });
      const disconnected = '/matchmaker/players/disconnected';
      await replay('matchmaker_players_disconnected', 200, disconnected, { token: lobbyToken, body: { player_token: seat.json.player.token } });
      await replay('matchmaker_players_disconnected', 400, disconnected, { token: lobbyToken, body: {} });
    });

    it('matchmaker_lobbies_list and matchmaker_regions_list: 200, with state, and the mocks; 400 for a bad flag', async () => {
      const list = await replay('matchmaker_lobbies_list', 200, '/matchmaker/lobbies/list?include_state=true', { token: tokens().public });
      expect(list.json.game_modes).toEqual([{ game_mode_id: 'default' }, { game_mode_id: 'duos' }, { game_mode_id: 'squads' }]);
      await replay('matchmaker_lobbies_list', 200, '/matchmaker/lobbies/list', { token: tokens().dev });
      await replay('matchmaker_lobbies_list', 400, '/matchmaker/lobbies/list?include_state=maybe', { token: tokens().public });
      const regions = await replay('matchmaker_regions_list', 200, '/matchmaker/regions', { token: tokens().public });
      expect(regions.json.regions.map((r: { region_id: string }) => r.region_id)).toEqual(['lnd-atl', 'lnd-fra', 'lnd-sgp']);
      await replay('matchmaker_regions_list', 200, '/matchmaker/regions', { token: tokens().dev });
      await replay('matchmaker_regions_list', 401, '/matchmaker/regions', { on: strict, token: null });
    });
  });

  describe('coverage', () => {
    it('every operation was replayed, each with a success', () => {
      for (const id of OPERATIONS) expect([...(answered.get(id) ?? [])].some((s) => s < 300), id).toBe(true);
    });

    it('every answer deviation the list names was needed, so the list holds nothing stale', () => {
      const unused = DEVIATIONS.filter((d) => d.kind !== 'request-body' && !spec.used.has(d));
      expect(unused).toEqual([]);
    });

    it('docs/emulator.md lists the same deviations', () => {
      const doc = fs.readFileSync(path.join(REPO_ROOT, 'docs', 'emulator.md'), 'utf8');
      for (const d of DEVIATIONS) expect(doc, d.summary).toContain(d.summary);
    });
  });
});

describe.skipIf(!SPEC_PRESENT)('the validator itself', () => {
  it('refuses what the spec refuses, so a pass means something', () => {
    const spec = new Spec();
    const op = spec.operation('matchmaker_players_getStatistics');
    const headers = { 'rvt-ray-id': 'x', 'content-type': 'application/json' };
    expect(spec.checkResponse(op, { status: 200, responseHeaders: headers, responseBody: '{"player_count":1,"game_modes":{}}' })).toEqual([]);
    expect(spec.checkResponse(op, { status: 200, responseHeaders: headers, responseBody: '{"player_count":"1","game_modes":{}}' })).toEqual([
      '/player_count must be integer',
    ]);
    expect(spec.checkResponse(op, { status: 200, responseHeaders: headers, responseBody: '{"player_count":1,"game_modes":{},"extra":1}' })).toEqual([
      '(body) must NOT have additional properties: extra',
    ]);
    expect(spec.checkResponse(op, { status: 418, responseHeaders: headers, responseBody: '{}' })).toEqual([
      'matchmaker_players_getStatistics answered 418, a status the spec does not list',
    ]);
    expect(spec.checkResponse(op, { status: 200, responseHeaders: { 'content-type': 'application/json' }, responseBody: '{"player_count":1,"game_modes":{}}' })).toEqual([
      'no rvt-ray-id header',
    ]);
    // A null only where the list allows it: the same null on a running lobby's summary elsewhere is refused.
    const logs = spec.operation('cloud_games_namespaces_logs_getNamespaceLobby');
    const body = (lobby: Record<string, unknown>) =>
      JSON.stringify({ lobby: { lobby_id: UNKNOWN, namespace_id: NAMESPACE_ID, lobby_group_name_id: 'x', region_id: UNKNOWN, create_ts: '2026-01-01T00:00:00Z', ...lobby }, stdout_presigned_urls: [], stderr_presigned_urls: [], perf_lists: [] });
    expect(spec.checkResponse(logs, { status: 200, responseHeaders: headers, responseBody: body({ status: { running: null, stopped: { stop_ts: '2026-01-01T00:00:01Z', failed: false, exit_code: 0 } } }) })).toEqual([]);
    expect(spec.checkResponse(logs, { status: 200, responseHeaders: headers, responseBody: body({ status: { running: {} }, start_ts: null }) })).toEqual([
      '/lobby/start_ts must be string',
    ]);
    const create = spec.operation('matchmaker_lobbies_create');
    const request = (b: unknown) => ({ method: 'POST', url: '/matchmaker/lobbies/create', requestHeaders: { 'content-type': 'application/json', 'content-length': '2' }, requestBody: JSON.stringify(b) });
    expect(spec.checkRequest(create, request({ game_mode: 'x', tags: { a: 'b' } }))).toEqual([]);
    expect(spec.checkRequest(create, request({ game_mode: 'x', tags: { a: 1 } }))).toEqual(['/tags/a must be string']);
    expect(spec.checkRequest(create, request({ gamemode: 'x' }))).toEqual([
      "(body) must have required property 'game_mode'",
      '(body) must NOT have additional properties: gamemode',
    ]);
  });
});
