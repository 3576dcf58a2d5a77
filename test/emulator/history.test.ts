import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { csvField, toCsv } from '../../src/emulator/csv.js';
import { GAME_ID, NAMESPACE_ID } from '../../src/emulator/index.js';
import { TIER_NAME, VERSION_ID, VERSION_NAME, lobbyGroupUuid, regionUuid } from '../../src/emulator/ids.js';
import { presignPath } from '../../src/emulator/presign.js';
import { Store, type LobbyRow } from '../../src/emulator/store.js';
import { expectErrorShape, startTestEmulator, type TestEmulator } from './helpers.js';

const HEADER =
  'lobby_id,namespace_id,namespace_name,region_id,region_name,tier_name,version_id,version_name,' +
  'lobby_group_id,lobby_group_name,start_ts,stop_ts,total_uptime_ms,query_uptime_ms';

let t: TestEmulator;
beforeAll(async () => {
  t = await startTestEmulator();
  // Lobbies with exact timestamps, written straight into the shared store.
  const store = Store.open(join(t.dataDir, 'emulator.db'));
  const lobby = (id: string, create: number, stop: number | null, mode = 'default', region = 'lnd-atl'): LobbyRow => ({
    lobby_id: id,
    namespace_id: NAMESPACE_ID,
    game_mode: mode,
    region_id: region,
    region_name: 'x',
    max_players: 8,
    publicity: 'public',
    tags: '{}',
    lobby_config: null,
    create_ts: create,
    start_ts: create + 1000,
    ready_ts: create + 2000,
    stop_ts: stop,
    exit_code: stop === null ? null : 0,
    failed: stop === null ? null : 0,
    idle_lifetime_ms: null,
    idle_stop_ts: null,
  });
  const rows = [
    lobby('00000000-0000-4000-8000-00000000000a', 1_000, 1_500), // entirely before the window
    lobby('00000000-0000-4000-8000-00000000000b', 1_500, 2_500), // created before, stopped inside
    lobby('00000000-0000-4000-8000-00000000000c', 2_200, 2_800, 'duos', 'lnd-fra'), // inside
    lobby('00000000-0000-4000-8000-00000000000d', 2_900, 4_000), // created inside, stopped after
    lobby('00000000-0000-4000-8000-00000000000e', 1_200, null), // running since before
    lobby('00000000-0000-4000-8000-00000000000f', 1_100, 5_000), // spans the window: production leaves it out
    lobby('00000000-0000-4000-8000-000000000010', 3_500, null), // created after the window
  ];
  for (const r of rows) {
    store.insertLobby(r, `11111111-0000-4000-8000-${r.lobby_id.slice(-12)}`);
    if (r.stop_ts !== null) store.stopLobby(r.lobby_id, r.stop_ts, 0, false);
  }
  store.close();
});
afterAll(async () => {
  await t.stop();
});

const exportHistory = (body: unknown, token: string | null = t.emu.tokens.cloud, game = GAME_ID) =>
  t.call('POST', `/cloud/games/${game}/matchmaker/lobbies/export-history`, { token, body });

describe('POST /cloud/games/{game_id}/matchmaker/lobbies/export-history', () => {
  it('answers a presigned URL whose CSV holds the overlapping lobbies, newest first', async () => {
    const res = await exportHistory({ query_start: 2_000, query_end: 3_000 });
    expect(res.status).toBe(200);
    expect(Object.keys(res.json)).toEqual(['url']);
    const url = new URL(res.json.url);
    expect(url.origin).toBe(t.emu.endpoint);
    expect(url.pathname).toMatch(/^\/_export\/[0-9a-f-]{36}\/export\.csv$/);
    const expires = Number(url.searchParams.get('expires'));
    expect(expires - Date.now()).toBeGreaterThan(59 * 60_000);

    // No bearer token on the download.
    const csv = await fetch(res.json.url);
    expect(csv.status).toBe(200);
    expect(csv.headers.get('content-type')).toMatch(/^text\/csv/);
    expect(csv.headers.get('rvt-ray-id')).toBeTruthy();
    const lines = (await csv.text()).split('\n');
    expect(lines.pop()).toBe('');
    expect(lines[0]).toBe(HEADER);
    const rows = lines.slice(1).map((l) => l.split(','));
    expect(rows.map((r) => r[0]!.slice(-1))).toEqual(['d', 'c', 'b', 'e']);
    const byId = Object.fromEntries(rows.map((r) => [r[0]!.slice(-1), r]));
    expect(byId.c).toEqual([
      '00000000-0000-4000-8000-00000000000c',
      NAMESPACE_ID,
      'prod',
      regionUuid('lnd-fra'),
      'lnd-fra',
      TIER_NAME,
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

  it('a window with nothing in it gives just the header', async () => {
    const res = await exportHistory({ query_start: 0, query_end: 900 });
    expect(await (await fetch(res.json.url)).text()).toBe(`${HEADER}\n`);
  });

  it('running lobbies created before query_end are in; a stopped lobby spanning the whole window is not', async () => {
    // Production's query: stopped in the window, created in it, or running; "d" and "f" span [3000, 3600].
    const res = await exportHistory({ query_start: 3_000, query_end: 3_600 });
    const ids = (await (await fetch(res.json.url)).text())
      .trim()
      .split('\n')
      .slice(1)
      .map((l) => l.slice(35, 36));
    expect(ids).toEqual(['0', 'e']);
  });

  it('the stored export does not change when lobbies change later', async () => {
    const res = await exportHistory({ query_start: 0, query_end: Date.now() + 60_000 });
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
    expectErrorShape(await exportHistory(body, t.emu.tokens.public), 403, 'API_FORBIDDEN');
    expectErrorShape(await exportHistory(body, t.emu.tokens.cloud, '12345678-1234-4234-8234-123456789abc'), 403, 'API_FORBIDDEN');
  });

  it('a tampered or expired download URL → 403', async () => {
    const res = await exportHistory({ query_start: 0, query_end: 1 });
    const url = new URL(res.json.url);
    const tampered = new URL(url);
    tampered.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 1));
    const bad = await t.call('GET', tampered.href);
    expectErrorShape(bad, 403, 'PRESIGN_INVALID');
    const expired = presignPath(t.secret, 'GET', url.pathname, Date.now() - 1);
    expectErrorShape(await t.call('GET', expired), 403, 'PRESIGN_EXPIRED');
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
    expect(toCsv(['a', 'b'], [[1, 'x,y']])).toBe('a,b\n1,"x,y"\n');
  });
});

describe('the window rules at their edges', () => {
  let edge: TestEmulator;
  const id = (n: string) => `00000000-0000-4000-8000-0000000e00${n}`;
  beforeAll(async () => {
    edge = await startTestEmulator();
    const store = Store.open(join(edge.dataDir, 'emulator.db'));
    const rows: [string, number, number | null][] = [
      ['a1', 10_000, 15_000], // created at query_start, stopped inside: in
      ['b1', 10_000, 25_000], // created at query_start, stopped after: neither clause holds, out
      ['c1', 5_000, 10_000], // stopped at query_start: out
      ['d1', 15_000, 20_000], // stopped at query_end: in
      ['e1', 20_000, null], // running, created at query_end: in, with no time inside
      ['f1', 20_000, 30_000], // created at query_end, stopped after: in
      ['g1', 20_001, null], // created after query_end: out
      ['h1', 9_000, null], // running since before: in, counted up to query_end
    ];
    for (const [n, create, stop] of rows) {
      const lobbyId = id(n);
      store.insertLobby(
        {
          lobby_id: lobbyId,
          namespace_id: NAMESPACE_ID,
          game_mode: 'default',
          region_id: 'lnd-atl',
          region_name: 'Atlanta',
          max_players: 8,
          publicity: 'public',
          tags: '{}',
          lobby_config: null,
          create_ts: create,
          start_ts: create,
          ready_ts: create,
          stop_ts: null,
          exit_code: null,
          failed: null,
          idle_lifetime_ms: null,
          idle_stop_ts: null,
        },
        `22222222-0000-4000-8000-0000000e00${n}`,
      );
      if (stop !== null) store.stopLobby(lobbyId, stop, 0, false);
    }
    store.close();
  });
  afterAll(() => edge.stop());

  it('keeps exactly the lobbies production keeps, newest first, with uptimes in and out of the window', async () => {
    const res = await edge.call('POST', `/cloud/games/${GAME_ID}/matchmaker/lobbies/export-history`, {
      token: edge.emu.tokens.cloud,
      body: { query_start: 10_000, query_end: 20_000 },
    });
    const lines = (await (await fetch(res.json.url)).text()).trimEnd().split('\n');
    expect(lines[0]).toBe(HEADER);
    const rows = lines.slice(1).map((l) => l.split(','));
    for (const r of rows) expect(r).toHaveLength(14);
    // lobby_id, then start_ts, stop_ts, total_uptime_ms, query_uptime_ms.
    expect(rows.map((r) => [r[0]!.slice(-2), ...r.slice(10)])).toEqual([
      ['e1', '20000', '', '0', '0'],
      ['f1', '20000', '30000', '10000', '0'],
      ['d1', '15000', '20000', '5000', '5000'],
      ['a1', '10000', '15000', '5000', '5000'],
      ['h1', '9000', '', '11000', '10000'],
    ]);
  });
});
