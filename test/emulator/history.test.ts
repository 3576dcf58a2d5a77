import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvField, toCsvRows, withHeader } from '../../src/emulator/services/csv.js';
import { GAME_ID, ManualClock, NAMESPACE_ID } from '../../src/emulator/index.js';
import { VERSION_ID, VERSION_NAME, lobbyGroupUuid, regionUuid } from '../../src/emulator/services/ids.js';
import { DEFAULT_TIER } from '../../src/emulator/services/tiers.js';
import { presignPath } from '../../src/emulator/stores/presign.js';
import { randomUUID } from 'node:crypto';
import type { Store } from '../../src/emulator/stores/store.js';
import { admit, expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { lobbyRow } from '../helpers/lobby-row.js';

const HEADER =
  'lobby_id,namespace_id,namespace_name,region_id,region_name,tier_name,version_id,version_name,' +
  'lobby_group_id,lobby_group_name,start_ts,stop_ts,total_uptime_ms,query_uptime_ms';

type Life = [name: string, create: number, stop: number | null, mode?: string, region?: string];

/**
 * Lives the lobbies through the services, in time order on the emulator's clock, so each has exactly the create
 * and stop times given; answers their ids by name.
 */
async function live(t: TestEmulator, clock: ManualClock, lives: Life[]): Promise<Record<string, string>> {
  const events = lives.flatMap(([name, create, stop, mode = 'default', region = 'lnd-atl']) => [
    { at: create, name, mode, region, stop: false },
    ...(stop === null ? [] : [{ at: stop, name, mode, region, stop: true }]),
  ]);
  events.sort((x, y) => x.at - y.at);
  const ids: Record<string, string> = {};
  const { lobbies, matchmaking } = t.services;
  for (const e of events) {
    clock.advance(e.at - clock.now());
    if (e.stop) await lobbies.stop(ids[e.name]!, { exitCode: 0 });
    else
      ids[e.name] = (
        await matchmaking.create(t.services.games.seeded, 'public', { gameMode: e.mode, regionId: e.region, maxPlayers: 8, publicity: 'public', tags: {}, lobbyConfig: undefined }, '127.0.0.1')
      ).lobbyId;
  }
  return ids;
}

const clock = new ManualClock(0);
let t: TestEmulator;
let ids: Record<string, string>;
let nameOf: (id: string) => string;
beforeAll(async () => {
  t = await startTestEmulator({}, { clock });
  ids = await live(t, clock, [
    ['a', 1_000, 1_500], // entirely before the window
    ['b', 1_500, 2_500], // created before, stopped inside
    ['c', 2_200, 2_800, 'duos', 'lnd-fra'], // inside
    ['d', 2_900, 4_000], // created inside, stopped after
    ['e', 1_200, null], // running since before
    ['f', 1_100, 5_000], // spans the window: production leaves it out
    ['g', 3_500, null], // created after the window
  ]);
  nameOf = (id) => Object.keys(ids).find((name) => ids[name] === id) ?? id;
});
afterAll(async () => {
  await t.stop();
});

const exportHistory = (body: unknown, token: string | null = t.tokens.cloud, game = GAME_ID) =>
  t.call('POST', `/cloud/games/${game}/matchmaker/lobbies/export-history`, { token, body });

describe('POST /cloud/games/{game_id}/matchmaker/lobbies/export-history', () => {
  it('answers a presigned URL whose CSV holds the overlapping lobbies, newest first', async () => {
    const res = await exportHistory({ query_start: 2_000, query_end: 3_000 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(['url']);
    const url = new URL(res.json.url);
    expect(url.origin).toBe(t.endpoint);
    expect(url.pathname).toMatch(/^\/_export\/[0-9a-f-]{36}\/export\.csv$/);
    expect(Number(url.searchParams.get('expires'))).toBe(clock.now() + 60 * 60_000);

    // No bearer token on the download.
    const csv = await fetch(res.json.url);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('rvt-ray-id')).toBeTruthy();
    const lines = (await csv.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines[0]).toBe(HEADER);
    const rows = lines.slice(1).map((l) => l.split(','));
    expect(rows.map((r) => nameOf(r[0]!))).toEqual(['d', 'c', 'b', 'e']);
    const byId = Object.fromEntries(rows.map((r) => [nameOf(r[0]!), r]));
    expect(byId.c).toEqual([
      ids.c,
      NAMESPACE_ID,
      'prod',
      regionUuid('lnd-fra'),
      'lnd-fra',
      DEFAULT_TIER,
      VERSION_ID,
      VERSION_NAME,
      lobbyGroupUuid('duos'),
      'duos',
      '2200',
      '2800',
      '600',
      '600',
    ]);
    // Created inside, stopped after: counted to query_end only inside the window.
    expect(byId.d!.slice(10)).toEqual(['2900', '4000', '1100', '100']);
    expect(byId.b!.slice(10)).toEqual(['1500', '2500', '1000', '500']);
    // Running: stop_ts empty, counted up to query_end.
    expect(byId.e!.slice(10)).toEqual(['1200', '', '1800', '1000']);
  });

  it('a window with nothing in it gives a 0-byte file, as the service\'s csv writer does (the header comes with the first record)', async () => {
    const res = await exportHistory({ query_start: 0, query_end: 900 });
    const download = await fetch(res.json.url);
    expect([download.status, await download.text()]).toEqual([200, '']);
  });

  it('running lobbies created before query_end are in; a stopped lobby spanning the whole window is not', async () => {
    // Production's query: stopped in the window, created in it, or running; "d" and "f" span [3000, 3600].
    const res = await exportHistory({ query_start: 3_000, query_end: 3_600 });
    const names = (await (await fetch(res.json.url)).text())
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => nameOf(l.split(',')[0]!));
    expect(names).toEqual(['g', 'e']);
  });

  it('the stored export does not change when lobbies change later', async () => {
    const res = await exportHistory({ query_start: 0, query_end: clock.now() + 60_000 });
    const first = await (await fetch(res.json.url)).text();
    await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
    expect(await (await fetch(res.json.url)).text()).toBe(first);
  });

  it('validates the window', async () => {
    expectErrorShape(await exportHistory({ query_start: 5, query_end: 4 }), 400, 'API_BAD_BODY');
    expectErrorShape(await exportHistory({ query_start: -1, query_end: 4 }), 400, 'API_BAD_BODY');
    expectErrorShape(await exportHistory({ query_start: 1.5, query_end: 4 }), 400, 'API_BAD_BODY');
    expectErrorShape(await exportHistory({ query_start: '1', query_end: 4 }), 400, 'API_BAD_BODY');
    expectErrorShape(await exportHistory({ query_end: 4 }), 400, 'API_BAD_BODY');
    expect((await exportHistory({ query_start: 4, query_end: 4 })).status).toBe(200);
  });

  it('needs the cloud token of the game', async () => {
    const body = { query_start: 0, query_end: 1 };
    expectErrorShape(await exportHistory(body, null), 401, 'API_UNAUTHORIZED');
    expectErrorShape(await exportHistory(body, t.tokens.public), 403, 'API_FORBIDDEN');
    expectErrorShape(await exportHistory(body, t.tokens.cloud, '12345678-1234-4234-8234-123456789abc'), 403, 'API_FORBIDDEN');
  });

  it('a tampered or expired download URL → 403', async () => {
    const res = await exportHistory({ query_start: 0, query_end: 1 });
    const url = new URL(res.json.url);
    const tampered = new URL(url);
    tampered.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 1));
    const bad = await t.call('GET', tampered.href);
    expectErrorShape(bad, 403, 'PRESIGN_INVALID');
    const expired = presignPath(t.secret, 'GET', url.pathname, clock.now() - 1);
    clock.advance(60 * 60_000 + 1);
    expectErrorShape(await t.call('GET', res.json.url), 403, 'PRESIGN_EXPIRED');
    expectErrorShape(await t.call('GET', expired), 403, 'PRESIGN_EXPIRED');
  });

  it("while one of a game's exports is being made, another is 429 with Retry-After: 1; then it is made", async () => {
    const end = t.services.history.bounds.begin(GAME_ID, clock.now());
    const refused = await exportHistory({ query_start: 0, query_end: 1 });
    expect(expectErrorShape(refused, 429, 'API_RATE_LIMIT').message).toContain('an export of this game is being made');
    expect(refused.headers.get('retry-after')).toBe('1');
    end();
    expect((await exportHistory({ query_start: 0, query_end: 1 })).status).toBe(200);
  });
});

describe('csv', () => {
  it('quotes only fields that need it', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(null)).toBe('');
    expect(csvField(0)).toBe('0');
    expect(withHeader(['a', 'b'], toCsvRows([[1, 'x,y']]))).toBe('a,b\n1,"x,y"\n');
    expect(withHeader(['a', 'b'], toCsvRows([]))).toBe('');
  });
});

describe('a history longer than a page', () => {
  it('the export and the lobby list read it a page at a time: every lobby once, newest first, ties by id', async () => {
    const long = await startTestEmulator({}, { clock: new ManualClock(10_000_000) });
    try {
      const store = (long.services.games as unknown as { deps: { store: Store } }).deps.store;
      // 1,203 stopped lobbies, three to a create time, so pages of the store's 500 end inside a tie.
      const rows = Array.from({ length: 1_203 }, (_, i) =>
        lobbyRow({ namespace_id: NAMESPACE_ID, lobby_id: randomUUID(), create_ts: 1_000 + Math.floor(i / 3), start_ts: 1_000, ready_ts: 1_000 }),
      );
      for (const row of rows) {
        await store.insertLobby(row, { player_id: randomUUID(), source_ip: '127.0.0.1', registration_ms: 60_000, connected: true });
        await store.stopLobby(row.lobby_id, 9_000, 0, false);
      }
      const expected = rows
        .slice()
        .sort((a, b) => b.create_ts - a.create_ts || (a.lobby_id < b.lobby_id ? -1 : 1))
        .map((r) => r.lobby_id);
      const res = await long.call('POST', `/cloud/games/${GAME_ID}/matchmaker/lobbies/export-history`, { token: long.tokens.cloud, body: { query_start: 0, query_end: 10_000 } });
      expect(res.status).toBe(200);
      const lines = (await (await fetch(res.json.url)).text()).trimEnd().split('\n');
      expect(lines[0]).toBe(HEADER);
      expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(expected);
      // The list: a page of the 100 newest, or of the 100 newest created before a time.
      const list = async (before?: number) =>
        ((await long.call('GET', `/cloud/games/${GAME_ID}/namespaces/${NAMESPACE_ID}/logs/lobbies${before === undefined ? '' : `?before_create_ts=${new Date(before).toISOString()}`}`, { token: long.tokens.cloud })).json
          .lobbies as { lobby_id: string }[]).map((l) => l.lobby_id);
      expect(await list()).toEqual(expected.slice(0, 100));
      const createdBefore = (ts: number) => rows.filter((r) => r.create_ts < ts).map((r) => r.lobby_id);
      expect(await list(1_200)).toEqual(expected.filter((id) => createdBefore(1_200).includes(id)).slice(0, 100));
      expect(await list(1_001)).toEqual(expected.slice(-3));
      expect(await list(1_000)).toEqual([]);
    } finally {
      await long.stop();
    }
  });
});

describe('the window rules at their edges', () => {
  const edgeClock = new ManualClock(0);
  let edge: TestEmulator;
  let edgeIds: Record<string, string>;
  beforeAll(async () => {
    edge = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { clock: edgeClock });
    edgeIds = await live(edge, edgeClock, [
      ['a1', 10_000, 15_000], // created at query_start, stopped inside: in
      ['b1', 10_000, 25_000], // created at query_start, stopped after: neither clause holds, out
      ['c1', 5_000, 10_000], // stopped at query_start: out
      ['d1', 15_000, 20_000], // stopped at query_end: in
      ['e1', 20_000, null], // running, created at query_end: in, with no time inside
      ['f1', 20_000, 30_000], // created at query_end, stopped after: in
      ['g1', 20_001, null], // created after query_end: out
      ['h1', 9_000, null], // running since before: in, counted up to query_end
    ]);
  });
  afterAll(() => edge.stop());

  it('keeps exactly the lobbies production keeps, newest first, with uptimes in and out of the window', async () => {
    const res = await edge.call('POST', `/cloud/games/${GAME_ID}/matchmaker/lobbies/export-history`, {
      token: edge.tokens.cloud,
      body: { query_start: 10_000, query_end: 20_000 },
    });
    const lines = (await (await fetch(res.json.url)).text()).trimEnd().split('\n');
    expect(lines[0]).toBe(HEADER);
    const rows = lines.slice(1).map((l) => l.split(','));
    for (const r of rows) expect(r).toHaveLength(14);
    const name = (id: string) => Object.keys(edgeIds).find((n) => edgeIds[n] === id);
    // Lobbies created at the same moment come in lobby_id order.
    const sameTime = (['e1', 'f1'] as const).slice().sort((x, y) => (edgeIds[x]! < edgeIds[y]! ? -1 : 1));
    const expected: Record<string, string[]> = {
      e1: ['20000', '', '0', '0'],
      f1: ['20000', '30000', '10000', '0'],
      d1: ['15000', '20000', '5000', '5000'],
      a1: ['10000', '15000', '5000', '5000'],
      h1: ['9000', '', '11000', '10000'],
    };
    // lobby_id, then start_ts, stop_ts, total_uptime_ms, query_uptime_ms.
    expect(rows.map((r) => [name(r[0]!), ...r.slice(10)])).toEqual(
      [...sameTime, 'd1', 'a1', 'h1'].map((n) => [n, ...expected[n]!]),
    );
  });
});

describe('lobbies the matchmaker stops', () => {
  const T = 1_800_000_000_000;
  /** The export's rows of [0, now] by lobby: its start_ts, stop_ts, total_uptime_ms. */
  async function exported(t: TestEmulator, clock: ManualClock): Promise<Record<string, string[]>> {
    const res = await t.call('POST', `/cloud/games/${GAME_ID}/matchmaker/lobbies/export-history`, {
      token: t.tokens.cloud,
      body: { query_start: 0, query_end: clock.now() },
    });
    const lines = (await (await fetch(res.json.url)).text()).trimEnd().split('\n').slice(1);
    return Object.fromEntries(lines.map((l) => l.split(',')).map((r) => [r[0]!, r.slice(10, 13)]));
  }

  it('are in the export, stopped when their last player left or their players\' registration ran out, custom lobbies too', async () => {
    const clock = new ManualClock(T);
    const t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0, registrationWindowMs: 5_000 }, { clock });
    try {
      const env = async (id: string) => (await t.call('GET', `/_emulator/lobbies/${id}/env`)).json.env.RIVET_TOKEN;
      // Found, admitted, left after a second: a lobby find made stops with its last player.
      const left = await t.call('POST', '/matchmaker/lobbies/find', { body: { game_modes: ['default'] } });
      await admit(t.endpoint, left.json);
      clock.advance(1_000);
      await t.call('POST', '/matchmaker/players/disconnected', { token: await env(left.json.lobby.lobby_id), body: { player_token: left.json.player.token } });
      // Found, never connected: removed when the registration window ends, and its lobby stops then.
      const never = await t.call('POST', '/matchmaker/lobbies/find', { body: { game_modes: ['duos'] } });
      // Created, never connected: a custom lobby stops too when its creator's registration ends (production's rule).
      const custom = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'squads' } });
      clock.advance(60_000);
      const rows = await exported(t, clock);
      expect(rows[left.json.lobby.lobby_id]).toEqual([String(T), String(T + 1_000), '1000']);
      expect(rows[never.json.lobby.lobby_id]).toEqual([String(T + 1_000), String(T + 6_000), '5000']);
      expect(rows[custom.json.lobby.lobby_id]).toEqual([String(T + 1_000), String(T + 6_000), '5000']);
    } finally {
      await t.stop();
    }
  });

  it('are in the export stopped at their ready deadline when their server never called ready', async () => {
    const clock = new ManualClock(T);
    const t = await startTestEmulator({ readiness: 'manual', readyWindowMs: 3_000 }, { clock });
    try {
      const waiting = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
      expect(waiting.status).toBe(200);
      clock.advance(10_000);
      expect((await exported(t, clock))[waiting.json.lobby.lobby_id]).toEqual([String(T), String(T + 3_000), '3000']);
    } finally {
      await t.stop();
    }
  });
});
