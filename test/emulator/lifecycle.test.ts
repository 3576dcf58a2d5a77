// What keeps a lobby running or ends it: max_players for joining players, the idle lifetime, and job metrics.
// Time is a ManualClock the tests move: nothing sleeps, and every expected timestamp is exact.
import { join } from 'node:path';
import { SCHEMA_VERSION } from '../../src/emulator/stores/migrations.js';
import { openDatabase } from '../../src/emulator/stores/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, ManualClock, NAMESPACE_ID, startEmulator } from '../../src/emulator/index.js';
import { admit, expectErrorShape, SINCE_22, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/cli.js';

const logsPath = (lobbyId: string) => `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies/${lobbyId}`;
const iso = (ms: number) => new Date(ms).toISOString();

describe('max_players', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 });
  });
  afterAll(() => t.stop());

  // The creator's server admits it at once, so the statistics count it as the service would.
  const create = async (body: Record<string, unknown>) => {
    const res = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'duos', ...body } });
    if (res.status === 200) await admit(t.endpoint, res.json);
    return res;
  };
  const join = (lobbyId: string) => t.call('POST', `/_emulator/lobbies/${lobbyId}/players`, { body: {} });
  const stats = async () => (await t.call('GET', '/matchmaker/players/statistics', { token: t.tokens.public })).json;

  it('the creator takes the first seat; joins fill the rest; one more is MATCHMAKER_LOBBY_FULL', async () => {
    const lobbyId = (await create({ max_players: 3, region: 'lnd-fra' })).json.lobby.lobby_id;
    const first = await join(lobbyId);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ lobby_id: lobbyId, player: { token: expect.any(String) }, player_count: 2, max_players: 3 });
    const claims = JSON.parse(Buffer.from(first.json.player.token.split('.')[2], 'base64url').toString());
    expect(claims).toMatchObject({ lobby_id: lobbyId, namespace_id: NAMESPACE_ID });
    expect((await join(lobbyId)).json.player_count).toBe(3);
    const full = expectErrorShape(await join(lobbyId), 400, 'MATCHMAKER_LOBBY_FULL');
    expect(full.message).toBe(`Lobby ${lobbyId} is full: 3 players at most.`);
    expect((await stats()).game_modes.duos.regions['lnd-fra'].player_count).toBe(3);
  });

  it('max_players 1 leaves no seat; the default is 32', async () => {
    const solo = (await create({ max_players: 1 })).json.lobby.lobby_id;
    expectErrorShape(await join(solo), 400, 'MATCHMAKER_LOBBY_FULL');
    const open = (await create({})).json.lobby.lobby_id;
    for (let i = 2; i <= 32; i++) expect((await join(open)).json.player_count).toBe(i);
    expectErrorShape(await join(open), 400, 'MATCHMAKER_LOBBY_FULL');
  });

  it('a stopped lobby takes nobody, an unknown one is 404, and its players leave the statistics', async () => {
    const lobbyId = (await create({ region: 'lnd-sgp' })).json.lobby.lobby_id;
    await join(lobbyId);
    expect((await stats()).game_modes.duos.regions['lnd-sgp'].player_count).toBe(2);
    await t.call('POST', `/_emulator/lobbies/${lobbyId}/stop`, { body: {} });
    expectErrorShape(await join(lobbyId), 400, 'MATCHMAKER_LOBBY_STOPPED');
    expect((await stats()).game_modes.duos.regions['lnd-sgp'].player_count).toBe(0);
    expectErrorShape(await join('12345678-1234-4234-8234-123456789abc'), 404, 'API_NOT_FOUND');
    expectErrorShape(await join('not-a-uuid'), 400, 'API_BAD_PATH_PARAMETER');
  });
});

describe('idle lifetime', () => {
  // Created at T: started at T + 1 s, ready at T + 2 s, stopped at T + 7 s unless a player joins.
  const LIFETIME = 5_000;
  const clock = new ManualClock(1_700_000_000_000);
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 1_000, readyDelayMs: 1_000, idleLifetimeMs: LIFETIME }, { clock });
  });
  afterAll(() => t.stop());

  const create = async (gameMode = 'default'): Promise<string> => {
    const res = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: gameMode } });
    await admit(t.endpoint, res.json);
    return res.json.lobby.lobby_id;
  };
  const logs = async (lobbyId: string, at = t) => (await at.call('GET', logsPath(lobbyId), { token: at.tokens.cloud })).json;
  const squads = async () =>
    (await t.call('GET', '/matchmaker/players/statistics', { token: t.tokens.public })).json.game_modes.squads.player_count;

  it('a lobby idle past its lifetime stopped at ready + lifetime, exit code 0, and every reader agrees', async () => {
    const created = clock.now();
    const id = await create();
    clock.advance(10_000);
    const res = await logs(id);
    expect(res.lobby.status.stopped).toEqual({ stop_ts: iso(created + 2_000 + LIFETIME), failed: false, exit_code: 0 });
    expect(Date.parse(res.lobby.status.stopped.stop_ts) - Date.parse(res.lobby.ready_ts)).toBe(LIFETIME);
    // No server ran it, so nothing measured one: no metrics, none made up.
    expect(res.metrics).toBeUndefined();
    // The history export shows the same stop.
    const exp = await t.call('POST', `/cloud/games/${GAME_ID}/matchmaker/lobbies/export-history`, {
      token: t.tokens.cloud,
      body: { query_start: created - 10_000, query_end: clock.now() },
    });
    const line = (await (await fetch(exp.json.url)).text()).split('\n').find((l) => l.startsWith(id))!.split(',');
    expect(line.slice(10)).toEqual([String(created), String(created + 7_000), '7000', '7000']);
    // A later stop does not rewrite it.
    const again = await t.services.lobbies.stop(id, { exitCode: 9 });
    expect(again!.lobby).toMatchObject({ stop_ts: created + 7_000, exit_code: 0 });
  });

  it('a lobby inside its lifetime runs, and the statistics count it until the deadline passes', async () => {
    const created = clock.now();
    const id = await create('squads');
    clock.advance(2_000 + LIFETIME - 1);
    expect((await logs(id)).lobby.status).toEqual({ running: {} });
    expect(await squads()).toBe(1);
    clock.advance(1);
    expect(await squads()).toBe(0);
    expect((await logs(id)).lobby.status.stopped.stop_ts).toBe(iso(created + 2_000 + LIFETIME));
  });

  it('a join pushes the deadline out; the lifetime is the creating config\'s, whoever reads', async () => {
    const id = await create();
    clock.advance(4_000);
    const joinedAt = clock.now();
    expect((await t.call('POST', `/_emulator/lobbies/${id}/players`, { body: {} })).status).toBe(200);
    // Past the first deadline (ready + lifetime): still running, also for an instance configured without one.
    clock.advance(LIFETIME - 1);
    const other = await startTestEmulator({ idleLifetimeMs: 0 }, { dataDir: t.dataDir, clock });
    try {
      expect((await logs(id, other)).lobby.status).toEqual({ running: {} });
      clock.advance(1);
      expect((await logs(id, other)).lobby.status.stopped).toEqual({ stop_ts: iso(joinedAt + LIFETIME), failed: false, exit_code: 0 });
    } finally {
      await other.close();
    }
  });

  it('without a lifetime (the default) a lobby with a player in it never stops by itself', async () => {
    const plainClock = new ManualClock(1_700_000_000_000);
    const plain = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { clock: plainClock });
    try {
      const seat = (await plain.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } })).json;
      await admit(plain.endpoint, seat);
      plainClock.advance(365 * 24 * 3_600_000);
      expect((await logs(seat.lobby.lobby_id, plain)).lobby.status).toEqual({ running: {} });
    } finally {
      await plain.stop();
    }
  });

});

describe('job metrics over HTTP', () => {
  const clock = new ManualClock(1_700_000_000_000);
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 2_000, readyDelayMs: 1_000 }, { clock });
  });
  afterAll(() => t.stop());

  it('a lobby that no server runs shows no metrics while it runs and after its stop: nothing is made up', async () => {
    const id = (await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } })).json.lobby.lobby_id;
    clock.advance(2_000 + 60_000);
    const read = async () => (await t.call('GET', logsPath(id), { token: t.tokens.cloud })).json;
    const running = await read();
    expect(running.lobby.status).toEqual({ running: {} });
    expect(running).not.toHaveProperty('metrics');
    await t.services.lobbies.stop(id);
    expect(await read()).not.toHaveProperty('metrics');
  });
});

describe('a data directory from an older gamehost', () => {
  it('a version 1 store is upgraded in place (to version 7, with games, the matchmaker, lobby owners and connected players counted) and keeps its lobbies', async () => {
    const dir = tempDir();
    const first = await startEmulator({ dataDir: dir, config: { startDelayMs: 0, readyDelayMs: 0 } });
    const created = await fetch(`${first.endpoint}/matchmaker/lobbies/create`, {
      method: 'POST',
      body: JSON.stringify({ game_mode: 'default' }),
    }).then((r) => r.json() as Promise<{ lobby: { lobby_id: string } }>);
    await first.close();
    // Turn it back into what version 1 wrote.
    const db = openDatabase(join(dir, 'emulator.db'), { timeout: 5000 });
    db.exec(`DROP TRIGGER connected_players_insert; DROP TRIGGER connected_players_update; DROP TRIGGER connected_players_delete;
             DROP TRIGGER connected_players_stop; DROP TRIGGER connected_players_lobby_delete; DROP TABLE running_players; DROP INDEX lobbies_running_mode;
             DROP INDEX lobbies_find; DROP INDEX lobbies_ready_deadline; DROP INDEX players_pending; DROP INDEX players_source;
             DROP INDEX lobbies_owner; ALTER TABLE lobbies DROP COLUMN owner; ALTER TABLE lobbies DROP COLUMN owner_pid;
             ALTER TABLE lobbies DROP COLUMN owner_start; ALTER TABLE lobbies DROP COLUMN server_pid; ALTER TABLE lobbies DROP COLUMN server_start;
             ALTER TABLE lobbies DROP COLUMN ports; ALTER TABLE lobbies DROP COLUMN auto_created; ALTER TABLE lobbies DROP COLUMN is_closed;
             ALTER TABLE lobbies DROP COLUMN state; ALTER TABLE lobbies DROP COLUMN ready_deadline_ts; ALTER TABLE lobbies DROP COLUMN player_count;
             ALTER TABLE players DROP COLUMN source_ip; ALTER TABLE players DROP COLUMN register_by_ts; ALTER TABLE players DROP COLUMN connect_ts;
             ALTER TABLE players DROP COLUMN remove_ts; ALTER TABLE lobbies DROP COLUMN version_id; ALTER TABLE lobbies DROP COLUMN idle_max; ALTER TABLE lobbies DROP COLUMN idle_ts;
             ALTER TABLE lobbies DROP COLUMN max_players_direct; ALTER TABLE lobbies DROP COLUMN max_players_party;
             DROP TABLE games; DROP INDEX lobbies_history; DROP INDEX exports_game;
             DROP INDEX lobbies_idle; ALTER TABLE lobbies DROP COLUMN idle_stop_ts; ALTER TABLE lobbies DROP COLUMN idle_lifetime_ms;
             ${SINCE_22} UPDATE meta SET value = '1' WHERE key = 'schema_version'`);
    db.close();

    const second = await startEmulator({ dataDir: dir, config: { idleLifetimeMs: 1_000 } });
    try {
      const logs = await fetch(`${second.endpoint}${logsPath(created.lobby.lobby_id)}`, {
        headers: { authorization: `Bearer ${second.tokens.cloud}` },
      }).then((r) => r.json() as Promise<{ lobby: { status: unknown } }>);
      expect(logs.lobby.status).toEqual({ running: {} });
      const check = openDatabase(join(dir, 'emulator.db'), { timeout: 5000 });
      expect(check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe(String(SCHEMA_VERSION));
      expect(check.prepare('SELECT idle_lifetime_ms FROM lobbies').pluck().all()).toEqual([null]);
      expect(check.prepare('SELECT COUNT(*) FROM games').pluck().get()).toBe(0);
      check.close();
      // Its running lobby's player, counted from the lobbies it held (an older store's players count as connected).
      const stats = await fetch(`${second.endpoint}/matchmaker/players/statistics`, { headers: { authorization: `Bearer ${second.tokens.public}` } }).then((r) => r.json() as Promise<{ player_count: number }>);
      expect(stats.player_count).toBe(1);
    } finally {
      await second.close();
    }
  });
});
