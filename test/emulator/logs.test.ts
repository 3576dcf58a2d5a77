import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, ManualClock, NAMESPACE_ID } from '../../src/emulator/index.js';
import { regionUuid } from '../../src/emulator/services/ids.js';
import { expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const logsPath = (lobbyId: string, ns = NAMESPACE_ID, game = GAME_ID) =>
  `/cloud/games/${game}/namespaces/${ns}/logs/lobbies/${lobbyId}`;
const RFC3339_MS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;

describe('lobby lifecycle with no delays', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 });
  });
  afterAll(async () => {
    await t.stop();
  });

  async function newLobby(gameMode = 'duos', region = 'lnd-sgp'): Promise<string> {
    const res = await t.call('POST', '/matchmaker/lobbies/create', {
      token: t.tokens.public,
      body: { game_mode: gameMode, region },
    });
    expect(res.status).toBe(200);
    return res.json.lobby.lobby_id;
  }

  it('a fresh lobby is running, started and ready, without metrics (no server runs it)', async () => {
    const before = Date.now();
    const lobbyId = await newLobby();
    const res = await t.call('GET', logsPath(lobbyId), { token: t.tokens.cloud });
    expect(res.status).toBe(200);
    const { lobby, metrics } = res.json;
    expect(lobby.lobby_id).toBe(lobbyId);
    expect(lobby.namespace_id).toBe(NAMESPACE_ID);
    expect(lobby.lobby_group_name_id).toBe('duos');
    expect(lobby.region_id).toBe(regionUuid('lnd-sgp'));
    expect(lobby.region_id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(lobby.create_ts).toMatch(RFC3339_MS);
    const created = Date.parse(lobby.create_ts);
    expect(created).toBeGreaterThanOrEqual(before);
    expect(lobby.start_ts).toBe(lobby.create_ts);
    expect(lobby.ready_ts).toBe(lobby.create_ts);
    expect(lobby.status).toEqual({ running: {} });
    // No server runs it here (readiness delay): nothing is measured, and nothing made up.
    expect(metrics).toBeUndefined();
    expect(res.json.stdout_presigned_urls).toEqual([]);
    expect(res.json.stderr_presigned_urls).toEqual([]);
    expect(res.json.perf_lists).toEqual([]);
  });

  it('stopping through the admin route gives status stopped with the exit code; a lobby no server ran has no metrics', async () => {
    const lobbyId = await newLobby();
    const stop = await t.call('POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: { exit_code: 3 } });
    expect(stop.status).toBe(200);
    expect(stop.json.lobby.status.running).toBeNull();
    expect(stop.json.lobby.status.stopped).toEqual({
      stop_ts: expect.stringMatching(RFC3339_MS),
      failed: true,
      exit_code: 3,
    });
    const res = await t.call('GET', logsPath(lobbyId), { token: t.tokens.cloud });
    expect(res.json.lobby.status).toEqual(stop.json.lobby.status);
    expect(res.json).not.toHaveProperty('metrics');
    expect(res.json.lobby.start_ts).toBe(res.json.lobby.create_ts);

    // Stopping again keeps the first stop.
    const again = await t.call('POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: { exit_code: 0 } });
    expect(again.json.lobby.status.stopped.exit_code).toBe(3);
    expect([stop.json.already_stopped, again.json.already_stopped]).toEqual([false, true]);
  });

  it('exit code 0 defaults to not failed; failed can be forced', async () => {
    const a = await newLobby();
    const stopA = await t.call('POST', `/_emulator/lobbies/${a}/stop`, { body: {} });
    expect(stopA.json.lobby.status.stopped).toMatchObject({ failed: false, exit_code: 0 });
    const b = await newLobby();
    const stopB = await t.call('POST', `/_emulator/lobbies/${b}/stop`, { body: { failed: true } });
    expect(stopB.json.lobby.status.stopped).toMatchObject({ failed: true, exit_code: 0 });
    // No body at all is fine too.
    const c = await newLobby();
    const stopC = await t.call('POST', `/_emulator/lobbies/${c}/stop`);
    expect(stopC.status).toBe(200);
  });

  it('admin stop: 404 for an unknown lobby, 400 for a bad exit code', async () => {
    expectErrorShape(
      await t.call('POST', '/_emulator/lobbies/12345678-1234-4234-8234-123456789abc/stop', { body: {} }),
      404,
      'API_NOT_FOUND',
    );
    const lobbyId = await newLobby();
    expectErrorShape(
      await t.call('POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: { exit_code: 'x' } }),
      400,
      'API_BAD_BODY',
    );
  });

  it('404 for an unknown lobby or namespace, 400 for a non-UUID id', async () => {
    const unknown = await t.call('GET', logsPath('12345678-1234-4234-8234-123456789abc'), { token: t.tokens.cloud });
    expect(expectErrorShape(unknown, 404, 'API_NOT_FOUND').message).toMatch(/Lobby 12345678/);
    const lobbyId = await newLobby();
    expectErrorShape(
      await t.call('GET', logsPath(lobbyId, '12345678-1234-4234-8234-123456789abc'), { token: t.tokens.cloud }),
      404,
      'API_NOT_FOUND',
    );
    const bad = await t.call('GET', logsPath('not-a-uuid'), { token: t.tokens.cloud });
    expect(expectErrorShape(bad, 400, 'API_BAD_PATH_PARAMETER').message).toMatch(/lobby_id/);
  });

  it('needs the cloud token of the game', async () => {
    const lobbyId = await newLobby();
    expectErrorShape(await t.call('GET', logsPath(lobbyId)), 401, 'API_UNAUTHORIZED');
    expectErrorShape(await t.call('GET', logsPath(lobbyId), { token: t.tokens.public }), 403, 'API_FORBIDDEN');
    const otherGame = '12345678-1234-4234-8234-123456789abc';
    expectErrorShape(
      await t.call('GET', logsPath(lobbyId, NAMESPACE_ID, otherGame), { token: t.tokens.cloud }),
      403,
      'API_FORBIDDEN',
    );
  });
});

describe('lobby lifecycle with delays, on a clock the test moves', () => {
  let t: TestEmulator;
  const clock = new ManualClock(1_700_000_000_000);
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 200, readyDelayMs: 800 }, { clock });
  });
  afterAll(async () => {
    await t.stop();
  });

  it('start_ts and ready_ts appear only once reached', async () => {
    const createdAt = clock.now();
    const created = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
    const lobbyId = created.json.lobby.lobby_id;
    const read = async () => (await t.call('GET', logsPath(lobbyId), { token: t.tokens.cloud })).json;

    const first = await read();
    expect(Date.parse(first.lobby.create_ts)).toBe(createdAt);
    expect(first.lobby.start_ts).toBeUndefined();
    expect(first.lobby.ready_ts).toBeUndefined();
    expect(first.metrics).toBeUndefined();
    expect(first.lobby.status).toEqual({ running: {} });

    clock.advance(199);
    expect((await read()).lobby.start_ts).toBeUndefined();
    clock.advance(1);
    const second = await read();
    expect(Date.parse(second.lobby.start_ts) - createdAt).toBe(200);
    expect(second.lobby.ready_ts).toBeUndefined();

    clock.advance(799);
    expect((await read()).lobby.ready_ts).toBeUndefined();
    clock.advance(1);
    const third = await read();
    expect(Date.parse(third.lobby.ready_ts) - Date.parse(third.lobby.start_ts)).toBe(800);
  });

  it('a lobby stopped before it started never shows start_ts', async () => {
    const created = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
    const lobbyId = created.json.lobby.lobby_id;
    await t.call('POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: { exit_code: 1 } });
    clock.advance(5_000);
    const res = (await t.call('GET', logsPath(lobbyId), { token: t.tokens.cloud })).json;
    expect(res.lobby.start_ts).toBeUndefined();
    expect(res.lobby.ready_ts).toBeUndefined();
    expect(res.lobby.status.stopped.failed).toBe(true);
  });
});
