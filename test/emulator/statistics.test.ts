import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admit, expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator({
    gameModes: ['default', 'duos'],
    regions: [
      { id: 'lnd-atl', name: 'Atlanta' },
      { id: 'lnd-fra', name: 'Frankfurt' },
    ],
  });
});
afterAll(async () => {
  await t.stop();
});

const stats = (query = '', token: string | null = t.tokens.public) =>
  t.call('GET', `/matchmaker/players/statistics${query}`, { token });

async function lobby(gameMode: string, region: string): Promise<string> {
  const res = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: gameMode, region } });
  expect(res.status).toBe(200);
  // Its server admits the player: the statistics count connected players.
  await admit(t.endpoint, res.json);
  return res.json.lobby.lobby_id;
}

describe('GET /matchmaker/players/statistics', () => {
  it('lists every game mode and region with zeros when empty', async () => {
    const res = await stats();
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      player_count: 0,
      game_modes: {
        default: { player_count: 0, regions: { 'lnd-atl': { player_count: 0 }, 'lnd-fra': { player_count: 0 } } },
        duos: { player_count: 0, regions: { 'lnd-atl': { player_count: 0 }, 'lnd-fra': { player_count: 0 } } },
      },
    });
  });

  it('counts the players of lobbies that are not stopped, per mode and region', async () => {
    await lobby('default', 'lnd-atl');
    await lobby('default', 'lnd-atl');
    await lobby('default', 'lnd-fra');
    await lobby('duos', 'lnd-fra');
    const stopped = await lobby('duos', 'lnd-atl');
    await t.call('POST', `/_emulator/lobbies/${stopped}/stop`, { body: {} });

    const res = await stats('?exclude_outdated=true');
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      player_count: 4,
      game_modes: {
        default: { player_count: 3, regions: { 'lnd-atl': { player_count: 2 }, 'lnd-fra': { player_count: 1 } } },
        duos: { player_count: 1, regions: { 'lnd-atl': { player_count: 0 }, 'lnd-fra': { player_count: 1 } } },
      },
    });
  });

  it('a dev token gets the mock answer', async () => {
    const res = await stats('', t.tokens.dev);
    expect(res.status).toBe(200);
    expect(res.json).toEqual({ player_count: 0, game_modes: {} });
  });

  it('needs a namespace token (tokenless covers lobby create only)', async () => {
    expectErrorShape(await stats('', null), 401, 'API_UNAUTHORIZED');
    expectErrorShape(await stats('', t.tokens.cloud), 403, 'API_FORBIDDEN');
  });

  it('400 for a bad exclude_outdated', async () => {
    expectErrorShape(await stats('?exclude_outdated=maybe'), 400, 'API_BAD_QUERY_PARAMETER');
  });
});

describe('outdated lobbies', () => {
  it('exclude_outdated drops game modes this config no longer has', async () => {
    const { startEmulator } = await import('../../src/emulator/index.js');
    // A second instance over the same data with a config that lacks "duos".
    const other = await startEmulator({ dataDir: t.dataDir, config: { gameModes: ['default'] } });
    try {
      const call = (q: string) =>
        fetch(`${other.endpoint}/matchmaker/players/statistics${q}`, {
          headers: { authorization: `Bearer ${other.tokens.public}` },
        }).then((r) => r.json() as Promise<{ player_count: number; game_modes: Record<string, unknown> }>);
      const all = await call('');
      const current = await call('?exclude_outdated=true');
      expect(all.player_count).toBe(4);
      expect(Object.keys(all.game_modes).sort()).toEqual(['default', 'duos']);
      expect(current.player_count).toBe(3);
      expect(Object.keys(current.game_modes)).toEqual(['default']);
    } finally {
      await other.close();
    }
  });
});

describe('who is counted', () => {
  let own: TestEmulator;
  beforeAll(async () => {
    own = await startTestEmulator({ gameModes: ['duos'], regions: [{ id: 'lnd-atl', name: 'Atlanta' }] });
  });
  afterAll(() => own.stop());

  const inGame = async () => (await own.call('GET', '/matchmaker/players/statistics', { token: own.tokens.public })).json.player_count;

  it('a player counts from its server\'s connected call until it is removed; pending players and stopped lobbies do not', async () => {
    const created = await own.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'duos' } });
    const lobbyId = created.json.lobby.lobby_id;
    // Pending: a place held against the lobby's capacity, nobody in game yet.
    expect(await inGame()).toBe(0);
    await admit(own.endpoint, created.json);
    expect(await inGame()).toBe(1);
    const joined = await own.call('POST', '/matchmaker/lobbies/join', { body: { lobby_id: lobbyId } });
    expect(joined.status).toBe(200);
    expect(await inGame()).toBe(1);
    await admit(own.endpoint, joined.json);
    expect(await inGame()).toBe(2);
    const env = (await own.call('GET', `/_emulator/lobbies/${lobbyId}/env`)).json.env;
    const left = await own.call('POST', '/matchmaker/players/disconnected', { token: env.RIVET_TOKEN, body: { player_token: created.json.player.token } });
    expect(left.status).toBe(200);
    expect(await inGame()).toBe(1);
    await own.call('POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: {} });
    expect(await inGame()).toBe(0);
  });
});
