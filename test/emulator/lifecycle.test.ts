// What keeps a lobby running or ends it: max_players for joining players, the idle lifetime, and job metrics.
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, NAMESPACE_ID, startEmulator, stopLobby } from '../../src/emulator/index.js';
import { lobbyMetrics } from '../../src/emulator/metrics.js';
import { Store, type LobbyRow } from '../../src/emulator/store.js';
import { expectErrorShape, startTestEmulator, tempDir, type TestEmulator } from './helpers.js';

const logsPath = (lobbyId: string) => `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies/${lobbyId}`;

function row(id: string, over: Partial<LobbyRow> = {}): LobbyRow {
  const create = over.create_ts ?? Date.now();
  return {
    lobby_id: id,
    namespace_id: NAMESPACE_ID,
    game_mode: 'default',
    region_id: 'lnd-atl',
    region_name: 'Atlanta',
    max_players: 8,
    publicity: 'public',
    tags: '{}',
    lobby_config: null,
    create_ts: create,
    start_ts: create + 1000,
    ready_ts: create + 2000,
    stop_ts: null,
    exit_code: null,
    failed: null,
    idle_lifetime_ms: null,
    idle_stop_ts: null,
    ...over,
  };
}

/** Writes lobbies with exact timestamps straight into the store the emulator reads. */
function insert(dataDir: string, ...rows: LobbyRow[]): void {
  const store = Store.open(join(dataDir, 'emulator.db'));
  try {
    for (const r of rows) store.insertLobby(r, `11111111-0000-4000-8000-${r.lobby_id.slice(-12)}`);
  } finally {
    store.close();
  }
}

describe('max_players', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 });
  });
  afterAll(() => t.stop());

  const create = (body: Record<string, unknown>) => t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'duos', ...body } });
  const join = (lobbyId: string) => t.call('POST', `/_emulator/lobbies/${lobbyId}/players`, { body: {} });
  const stats = async () => (await t.call('GET', '/matchmaker/players/statistics', { token: t.emu.tokens.public })).json;

  it('the creator takes the first seat; joins fill the rest; one more is MATCHMAKER_LOBBY_FULL', async () => {
    const lobbyId = (await create({ max_players: 3, region: 'lnd-fra' })).json.lobby.lobby_id;
    const first = await join(lobbyId);
    expect(first.status).toBe(200);
    expect(first.json).toEqual({ lobby_id: lobbyId, player: { token: expect.any(String) }, player_count: 2, max_players: 3 });
    const claims = JSON.parse(Buffer.from(first.json.player.token.split('.')[1], 'base64url').toString());
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
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0, idleLifetimeMs: 60_000 });
  });
  afterAll(() => t.stop());

  const logs = async (lobbyId: string) => (await t.call('GET', logsPath(lobbyId), { token: t.emu.tokens.cloud })).json;

  it('a lobby idle past its lifetime stopped at ready + lifetime, exit code 0, and every reader agrees', async () => {
    const now = Date.now();
    const id = '00000000-0000-4000-8000-0000000000a1';
    insert(t.dataDir, row(id, { create_ts: now - 10_000, start_ts: now - 9_000, ready_ts: now - 8_000, idle_lifetime_ms: 5_000, idle_stop_ts: now - 3_000 }));
    const res = await logs(id);
    expect(res.lobby.status.stopped).toEqual({ stop_ts: new Date(now - 3_000).toISOString(), failed: false, exit_code: 0 });
    expect(res.metrics).toBeUndefined();
    // The history export shows the same stop.
    const exp = await t.call('POST', `/cloud/games/${GAME_ID}/matchmaker/lobbies/export-history`, {
      token: t.emu.tokens.cloud,
      body: { query_start: now - 20_000, query_end: now },
    });
    const line = (await (await fetch(exp.json.url)).text()).split('\n').find((l) => l.startsWith(id))!.split(',');
    expect(line.slice(10)).toEqual([String(now - 10_000), String(now - 3_000), '7000', '7000']);
    // A later stop does not rewrite it.
    const again = stopLobby(t.dataDir, id, { exitCode: 9 }) as any;
    expect(again.lobby.status.stopped.exit_code).toBe(0);
  });

  it('a lobby inside its lifetime runs, and the statistics count it until the deadline passes', async () => {
    const now = Date.now();
    const id = '00000000-0000-4000-8000-0000000000a2';
    insert(t.dataDir, row(id, { game_mode: 'squads', create_ts: now - 1_000, start_ts: now - 1_000, ready_ts: now - 1_000, idle_lifetime_ms: 2_000, idle_stop_ts: now + 1_000 }));
    const stats = async () => (await t.call('GET', '/matchmaker/players/statistics', { token: t.emu.tokens.public })).json.game_modes.squads.player_count;
    expect((await logs(id)).lobby.status).toEqual({ running: {} });
    expect(await stats()).toBe(1);
    await new Promise((r) => setTimeout(r, Math.max(0, now + 1_050 - Date.now())));
    expect(await stats()).toBe(0);
    expect((await logs(id)).lobby.status.stopped.stop_ts).toBe(new Date(now + 1_000).toISOString());
  });

  it('lobby create stores the lifetime of its config; a join pushes the deadline out', async () => {
    const created = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
    const lobbyId = created.json.lobby.lobby_id;
    const read = () => Store.open(join(t.dataDir, 'emulator.db'));
    let store = read();
    const before = store.getLobby(lobbyId)!;
    store.close();
    expect(before.idle_lifetime_ms).toBe(60_000);
    expect(before.idle_stop_ts).toBe(before.ready_ts + 60_000);
    await new Promise((r) => setTimeout(r, 20));
    const joinedAt = Date.now();
    expect((await t.call('POST', `/_emulator/lobbies/${lobbyId}/players`, { body: {} })).status).toBe(200);
    store = read();
    const after = store.getLobby(lobbyId)!;
    store.close();
    expect(after.idle_stop_ts! - 60_000).toBeGreaterThanOrEqual(joinedAt - 5);
    expect(after.idle_stop_ts!).toBeGreaterThan(before.idle_stop_ts!);
  });

  it('a short lifetime ends a real lobby by itself', async () => {
    const quick = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0, idleLifetimeMs: 150 });
    try {
      const lobbyId = (await quick.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } })).json.lobby.lobby_id;
      await new Promise((r) => setTimeout(r, 250));
      const res = (await quick.call('GET', logsPath(lobbyId), { token: quick.emu.tokens.cloud })).json;
      expect(Date.parse(res.lobby.status.stopped.stop_ts) - Date.parse(res.lobby.ready_ts)).toBe(150);
      expect(res.lobby.status.stopped).toMatchObject({ failed: false, exit_code: 0 });
    } finally {
      await quick.stop();
    }
  });

  it('without a lifetime (the default) lobbies never stop by themselves', async () => {
    const plain = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 });
    try {
      const lobbyId = (await plain.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } })).json.lobby.lobby_id;
      const store = Store.open(join(plain.dataDir, 'emulator.db'));
      expect(store.getLobby(lobbyId)).toMatchObject({ idle_lifetime_ms: null, idle_stop_ts: null });
      store.close();
    } finally {
      await plain.stop();
    }
  });
});

describe('job metrics over HTTP', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator();
  });
  afterAll(() => t.stop());

  it('a lobby running for ten minutes shows the last 30 samples of its walk, sliding as time passes', async () => {
    // Half a sample interval past a boundary, so the request lands on the same sample index as the check.
    const start = Date.now() - 600_000 - 2_500;
    const id = '00000000-0000-4000-8000-0000000000b1';
    insert(t.dataDir, row(id, { create_ts: start - 2_000, start_ts: start, ready_ts: start + 1_000 }));
    const { metrics } = (await t.call('GET', logsPath(id), { token: t.emu.tokens.cloud })).json;
    const expected = lobbyMetrics(id, start, Date.now());
    expect(metrics).toEqual({ job: `lobby-${id}`, cpu: expected.cpu, memory: expected.memory, allocated_memory: 512 });
    expect(metrics.cpu).toHaveLength(30);
    for (const m of metrics.memory) expect(m).toBeLessThanOrEqual(512 * 1024 * 1024);
    // Five seconds on, every sample has moved one place left and a new one has arrived.
    const later = lobbyMetrics(id, start, Date.now() + 5_000);
    expect(later.cpu.slice(0, 29)).toEqual(metrics.cpu.slice(1));
    expect(later.memory.slice(0, 29)).toEqual(metrics.memory.slice(1));
  });
});

describe('a data directory from an older gamehost', () => {
  it('a version 1 store is upgraded in place and keeps its lobbies', async () => {
    const dir = tempDir();
    const first = await startEmulator({ dataDir: dir, config: { startDelayMs: 0, readyDelayMs: 0 } });
    const created = await fetch(`${first.endpoint}/matchmaker/lobbies/create`, {
      method: 'POST',
      body: JSON.stringify({ game_mode: 'default' }),
    }).then((r) => r.json() as Promise<{ lobby: { lobby_id: string } }>);
    await first.close();
    // Turn it back into what version 1 wrote.
    const db = new Database(join(dir, 'emulator.db'));
    db.exec(`DROP INDEX lobbies_idle; ALTER TABLE lobbies DROP COLUMN idle_stop_ts; ALTER TABLE lobbies DROP COLUMN idle_lifetime_ms;
             UPDATE meta SET value = '1' WHERE key = 'schema_version'`);
    db.close();

    const second = await startEmulator({ dataDir: dir, config: { idleLifetimeMs: 1_000 } });
    try {
      const logs = await fetch(`${second.endpoint}${logsPath(created.lobby.lobby_id)}`, {
        headers: { authorization: `Bearer ${second.tokens.cloud}` },
      }).then((r) => r.json() as Promise<{ lobby: { status: unknown } }>);
      expect(logs.lobby.status).toEqual({ running: {} });
      const check = new Database(join(dir, 'emulator.db'), { readonly: true });
      expect(check.prepare("SELECT value FROM meta WHERE key = 'schema_version'").pluck().get()).toBe('2');
      expect(check.prepare('SELECT idle_lifetime_ms FROM lobbies').pluck().all()).toEqual([null]);
      check.close();
    } finally {
      await second.close();
    }
  });
});
