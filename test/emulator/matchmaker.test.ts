// The rest of the matchmaker over HTTP: find and join waiting for readiness, the lobby token's routes, players
// pending -> connected -> removed, list, the per-IP limits; concurrent finds on SQLite and PostgreSQL.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, NAMESPACE_ID } from '../../src/emulator/index.js';
import { createTestDatabase, PG_PRESENT } from '../helpers/postgres.js';
import { admit, type Call, expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const FIND = '/matchmaker/lobbies/find';
const JOIN = '/matchmaker/lobbies/join';

/** A request still in flight has not answered: it is given a few event-loop turns of real time to show it. */
async function pendingAfter<T>(promise: Promise<T>, ms = 150): Promise<boolean> {
  const marker = Symbol('pending');
  const first = await Promise.race([promise, new Promise((resolve) => setTimeout(() => resolve(marker), ms))]);
  return first === marker;
}

async function lobbyEnv(t: TestEmulator, lobbyId: string): Promise<Record<string, string>> {
  const res = await t.call('GET', `/_emulator/lobbies/${lobbyId}/env`);
  expect(res.status, res.text).toBe(200);
  return res.json.env;
}

describe('manual readiness: a lobby waits for its server', () => {
  const clock = new ManualClock(1_800_000_000_000);
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ readiness: 'manual', registrationWindowMs: 60_000, readyWindowMs: 300_000 }, { clock });
  });
  afterAll(() => t.stop());

  it("find answers once the lobby's server calls ready with its token; the answer's port is the environment's", async () => {
    const finding = t.call('POST', FIND, { body: { game_modes: ['duos'], tags: { map: 'dust' } } });
    expect(await pendingAfter(finding)).toBe(true);
    const list = await t.call('GET', '/matchmaker/lobbies/list', {});
    const lobbyId = list.json.lobbies.find((l: { game_mode_id: string }) => l.game_mode_id === 'duos').lobby_id;
    const env = await lobbyEnv(t, lobbyId);
    expect(env).toMatchObject({
      RIVET_LOBBY_ID: lobbyId,
      RIVET_NAMESPACE_ID: NAMESPACE_ID,
      RIVET_GAME_MODE_NAME: 'duos',
      RIVET_REGION_NAME: 'lnd-atl',
      RIVET_MAX_PLAYERS_NORMAL: '32',
      RIVET_LOBBY_TAGS: '{"map":"dust"}',
      RIVET_API_ENDPOINT: t.endpoint,
    });
    expect(env.RIVET_TOKEN).toMatch(/^lobby\./);
    expect(env.RIVET_LOBBY_TOKEN).toBe(env.RIVET_TOKEN);
    expect(Number(env.PORT_default)).toBeGreaterThan(0);
    expect(Number(env.PORT_RANGE_MAX_game_range) - Number(env.PORT_RANGE_MIN_game_range)).toBe(9);
    expect(env.RIVET_LOBBY_CONFIG).toBeUndefined();
    expect((await t.call('POST', '/matchmaker/lobbies/ready', { token: env.RIVET_TOKEN })).json).toEqual({});
    const found = await finding;
    expect(found.status, found.text).toBe(200);
    expect(found.json.lobby.lobby_id).toBe(lobbyId);
    expect(found.json.ports.default).toEqual({ host: `127.0.0.1:${env.PORT_default}`, hostname: '127.0.0.1', port: Number(env.PORT_default), is_tls: false });
    // The player connects once; the token again, or one forged, is refused.
    const connected = (token: string) => t.call('POST', '/matchmaker/players/connected', { token: env.RIVET_TOKEN, body: { player_token: token } });
    expect((await connected(found.json.player.token)).status).toBe(200);
    expectErrorShape(await connected(found.json.player.token), 400, 'MATCHMAKER_PLAYER_ALREADY_CONNECTED');
    const [label, head, claims] = found.json.player.token.split('.');
    expectErrorShape(await connected(`${label}.${head}.${claims}.${'A'.repeat(43)}`), 400, 'TOKEN_ERROR');
    expectErrorShape(await connected(env.RIVET_TOKEN), 401, 'CLAIMS_MISSING_ENTITLEMENT');
  });

  it('waits at most 50 s (API_REQUEST_TIMEOUT), and answers MATCHMAKER_LOBBY_STOPPED when the lobby stops first', async () => {
    const timingOut = t.call('POST', FIND, { body: { game_modes: ['squads'], regions: ['lnd-fra'] } });
    expect(await pendingAfter(timingOut)).toBe(true);
    clock.advance(50_000);
    expectErrorShape(await timingOut, 500, 'API_REQUEST_TIMEOUT');
    // Another game mode: list shows a lobby without connected players only when it is its mode's only one.
    const stopping = t.call('POST', FIND, { body: { game_modes: ['default'], regions: ['lnd-sgp'] } });
    expect(await pendingAfter(stopping)).toBe(true);
    const id = (await t.call('GET', '/matchmaker/lobbies/list', {})).json.lobbies.find((l: { region_id: string }) => l.region_id === 'lnd-sgp').lobby_id;
    await t.call('POST', `/_emulator/lobbies/${id}/stop`, { body: {} });
    expectErrorShape(await stopping, 400, 'MATCHMAKER_LOBBY_STOPPED');
  });

  it('a lobby whose server never calls ready stops at its ready window; its player was never counted as connected', async () => {
    const created = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default', region: 'lnd-fra' } });
    const id = created.json.lobby.lobby_id;
    clock.advance(300_000);
    const logs = await t.call('GET', `/cloud/games/${t.gameId}/namespaces/${NAMESPACE_ID}/logs/lobbies/${id}`, { token: t.tokens.cloud });
    expect(logs.json.lobby.status.stopped).toMatchObject({ failed: true });
    expect(logs.json.lobby.ready_ts).toBeUndefined();
  });

  it('a pending player must connect within the registration window, which restarts when the lobby calls ready', async () => {
    const created = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default', region: 'lnd-sgp' } });
    const env = await lobbyEnv(t, created.json.lobby.lobby_id);
    clock.advance(120_000);
    await t.call('POST', '/matchmaker/lobbies/ready', { token: env.RIVET_TOKEN });
    clock.advance(59_999);
    const late = await t.call('POST', JOIN, { body: { lobby_id: created.json.lobby.lobby_id } });
    clock.advance(1);
    // The creator's time ran out at ready + 60 s; the joiner has its own.
    expectErrorShape(
      await t.call('POST', '/matchmaker/players/connected', { token: env.RIVET_TOKEN, body: { player_token: created.json.player.token } }),
      400,
      'MATCHMAKER_PLAYER_REGISTRATION_EXPIRED',
    );
    expect((await t.call('POST', '/matchmaker/players/connected', { token: env.RIVET_TOKEN, body: { player_token: late.json.player.token } })).status).toBe(200);
  });
});

describe("a stopped lobby's token, and the create's lobby_config", () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 });
  });
  afterAll(() => t.stop());

  it('closed and state with a stopped lobby\'s token are refused (MATCHMAKER_LOBBY_STOPPED) and change nothing; its environment is refused too', async () => {
    const seat = (await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } })).json;
    const id = seat.lobby.lobby_id;
    const env = await lobbyEnv(t, id);
    await t.call('PUT', '/matchmaker/lobbies/state', { token: env.RIVET_TOKEN, body: '{"round": 1}' });
    expect((await t.call('POST', `/_emulator/lobbies/${id}/stop`, { body: {} })).status).toBe(200);
    expectErrorShape(await t.call('PUT', '/matchmaker/lobbies/closed', { token: env.RIVET_TOKEN, body: { is_closed: true } }), 400, 'MATCHMAKER_LOBBY_STOPPED');
    expectErrorShape(await t.call('PUT', '/matchmaker/lobbies/state', { token: env.RIVET_TOKEN, body: '{"round": 2}' }), 400, 'MATCHMAKER_LOBBY_STOPPED');
    expectErrorShape(await t.call('PUT', '/matchmaker/lobbies/state', { token: env.RIVET_TOKEN, headers: { 'content-length': '0' } }), 400, 'MATCHMAKER_LOBBY_STOPPED');
    expect((await t.call('GET', `/matchmaker/lobbies/${id}/state`, { token: t.tokens.public })).json).toEqual({ round: 1 });
    expectErrorShape(await t.call('GET', `/_emulator/lobbies/${id}/env`), 400, 'MATCHMAKER_LOBBY_STOPPED');
  });

  it('lobby_config is taken up to 16 KiB of JSON and refused past it with production\'s code, before the lobby is made', async () => {
    // {"a":"…"} is 8 bytes of JSON around the string.
    const config = (bytes: number) => ({ a: 'x'.repeat(bytes - 8) });
    const at = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'squads', lobby_config: config(16 * 1024) } });
    expect(at.status, at.text).toBe(200);
    expect(JSON.parse((await lobbyEnv(t, at.json.lobby.lobby_id)).RIVET_LOBBY_CONFIG!)).toEqual(config(16 * 1024));
    const before = (await t.call('GET', '/matchmaker/lobbies/list', {})).json.lobbies.length;
    for (const bytes of [16 * 1024 + 1, 200 * 1024]) {
      const past = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'squads', lobby_config: config(bytes) } });
      expectErrorShape(past, 400, 'MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID');
      expect(past.json.message).toContain('too large (> 16KiB)');
    }
    // Multi-byte characters count as the bytes they are.
    expectErrorShape(await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'squads', lobby_config: { a: 'é'.repeat(8 * 1024) } } }), 400, 'MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID');
    expect((await t.call('GET', '/matchmaker/lobbies/list', {})).json.lobbies.length).toBe(before);
  });
});

describe('the lobby token and the players of a lobby find made', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 });
  });
  afterAll(() => t.stop());

  it("is refused on the client routes and on another lobby's state; another lobby's player is refused", async () => {
    const a = await t.call('POST', FIND, { body: { game_modes: ['default'], tags: { room: 'a' } } });
    const b = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'default' } });
    const envA = await lobbyEnv(t, a.json.lobby.lobby_id);
    expectErrorShape(await t.call('POST', FIND, { token: envA.RIVET_TOKEN, body: { game_modes: ['default'] } }), 401, 'CLAIMS_MISSING_ENTITLEMENT');
    expectErrorShape(await t.call('GET', `/matchmaker/lobbies/${b.json.lobby.lobby_id}/state`, { token: envA.RIVET_TOKEN }), 401, 'CLAIMS_MISSING_ENTITLEMENT');
    expectErrorShape(await t.call('POST', '/matchmaker/lobbies/ready', { token: t.tokens.public }), 401, 'CLAIMS_MISSING_ENTITLEMENT');
    expectErrorShape(
      await t.call('POST', '/matchmaker/players/connected', { token: envA.RIVET_TOKEN, body: { player_token: b.json.player.token } }),
      400,
      'MATCHMAKER_PLAYER_IN_DIFFERENT_LOBBY',
    );
    // State: set by the server (any JSON), read by any client, cleared by an empty body.
    await t.call('PUT', '/matchmaker/lobbies/state', { token: envA.RIVET_TOKEN, body: '[1, "two"]' });
    expect((await t.call('GET', `/matchmaker/lobbies/${a.json.lobby.lobby_id}/state`, { token: t.tokens.public })).json).toEqual([1, 'two']);
    expect((await t.call('GET', `/matchmaker/lobbies/${a.json.lobby.lobby_id}/state`, { token: envA.RIVET_TOKEN })).json).toEqual([1, 'two']);
    await t.call('PUT', '/matchmaker/lobbies/state', { token: envA.RIVET_TOKEN, headers: { 'content-length': '0' } });
    expect((await t.call('GET', `/matchmaker/lobbies/${a.json.lobby.lobby_id}/state`, { token: t.tokens.public })).text).toBe('null');
    // A state nested deeper than any body may be is refused when set: kept, it would make every later read of the
    // lobby's state and of the list with states fail (60 KB, under the size bound).
    const deep = '['.repeat(30_000) + ']'.repeat(30_000);
    expectErrorShape(await t.call('PUT', '/matchmaker/lobbies/state', { token: envA.RIVET_TOKEN, body: deep }), 400, 'API_BAD_BODY');
    expect((await t.call('GET', `/matchmaker/lobbies/${a.json.lobby.lobby_id}/state`, { token: t.tokens.public })).text).toBe('null');
    expect((await t.call('GET', '/matchmaker/lobbies/list?include_state=true', { token: t.tokens.public })).status).toBe(200);
  });

  it('a closed lobby is left out of find but joins directly; reopened, it is found again', async () => {
    const first = await t.call('POST', FIND, { body: { game_modes: ['duos'], tags: { room: 'closing' } } });
    const id = first.json.lobby.lobby_id;
    const env = await lobbyEnv(t, id);
    await t.call('PUT', '/matchmaker/lobbies/closed', { token: env.RIVET_TOKEN, body: { is_closed: true } });
    expectErrorShape(await t.call('POST', FIND, { body: { game_modes: ['duos'], tags: { room: 'closing' }, prevent_auto_create_lobby: true } }), 400, 'MATCHMAKER_NO_AVAILABLE_LOBBIES');
    expect((await t.call('POST', JOIN, { body: { lobby_id: id } })).json.lobby.lobby_id).toBe(id);
    await t.call('PUT', '/matchmaker/lobbies/closed', { token: env.RIVET_TOKEN, body: { is_closed: false } });
    expect((await t.call('POST', FIND, { body: { game_modes: ['duos'], tags: { room: 'closing' } } })).json.lobby.lobby_id).toBe(id);
  });

  it('when its last player disconnects, a lobby stops, made by find or by create (production\'s idle rule); list and statistics follow', async () => {
    const found = await t.call('POST', FIND, { body: { game_modes: ['squads'], regions: ['lnd-fra'] } });
    const created = await t.call('POST', '/matchmaker/lobbies/create', { body: { game_mode: 'squads', region: 'lnd-fra' } });
    await admit(t.endpoint, found.json);
    await admit(t.endpoint, created.json);
    const listed = await t.call('GET', '/matchmaker/lobbies/list?include_state=true', {});
    const squads = listed.json.lobbies.filter((l: { game_mode_id: string }) => l.game_mode_id === 'squads');
    expect(squads.map((l: { total_player_count: number; state: unknown }) => [l.total_player_count, l.state])).toEqual([
      [1, null],
      [1, null],
    ]);
    const stats = async () => (await t.call('GET', '/matchmaker/players/statistics', { token: t.tokens.public })).json.game_modes.squads.player_count;
    expect(await stats()).toBe(2);
    for (const seat of [found.json, created.json]) {
      const env = await lobbyEnv(t, seat.lobby.lobby_id);
      const res = await t.call('POST', '/matchmaker/players/disconnected', { token: env.RIVET_TOKEN, body: { player_token: seat.player.token } });
      expect(res.status).toBe(200);
    }
    expect(await stats()).toBe(0);
    const after = (await t.call('GET', '/matchmaker/lobbies/list', {})).json.lobbies.map((l: { lobby_id: string }) => l.lobby_id);
    for (const seat of [found.json, created.json]) {
      expect(after).not.toContain(seat.lobby.lobby_id);
      expectErrorShape(await t.call('POST', JOIN, { body: { lobby_id: seat.lobby.lobby_id } }), 400, 'MATCHMAKER_LOBBY_STOPPED');
    }
  });

  it('development tokens get the mocks and nothing is kept', async () => {
    const dev = t.tokens.dev;
    const found = await t.call('POST', FIND, { token: dev, body: { game_modes: ['default'] } });
    expect(found.json.lobby).toMatchObject({ lobby_id: '00000000-0000-0000-0000-000000000000', region: { region_id: 'dev-lcl', display_name: 'Local' } });
    expect(found.json.player.token).toMatch(/^dev_player\./);
    expect((await t.call('GET', '/matchmaker/regions', { token: dev })).json.regions.map((r: { region_id: string }) => r.region_id)).toEqual(['dev-lcl']);
    const list = await t.call('GET', '/matchmaker/lobbies/list', { token: dev });
    expect(list.json.lobbies.map((l: { game_mode_id: string; total_player_count: number }) => `${l.game_mode_id}:${l.total_player_count}`)).toEqual(['default:0', 'duos:0', 'squads:0']);
    for (const [method, path, body] of [
      ['POST', '/matchmaker/lobbies/ready', undefined],
      ['PUT', '/matchmaker/lobbies/closed', { is_closed: true }],
      ['PUT', '/matchmaker/lobbies/state', { a: 1 }],
      ['POST', '/matchmaker/players/connected', { player_token: found.json.player.token }],
      ['POST', '/matchmaker/players/disconnected', { player_token: found.json.player.token }],
    ] as const)
      expect((await t.call(method, path, { token: dev, body: body ?? {} })).json).toEqual({});
  });
});

describe('the per-IP limits (rateLimits: true)', () => {
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0, rateLimits: true });
  });
  afterAll(() => t.stop());

  it('at most 8 unconnected players from one address, then find and join share 16 a minute; 429 carries an HTTP-date', async () => {
    const answers: Call[] = [];
    for (let i = 0; i < 9; i++) answers.push(await t.call('POST', FIND, { body: { game_modes: ['default'] } }));
    expect(answers.slice(0, 8).every((a) => a.status === 200)).toBe(true);
    expectErrorShape(answers[8]!, 400, 'MATCHMAKER_TOO_MANY_PLAYERS_FROM_SOURCE');
    for (let i = 0; i < 7; i++) await t.call('POST', JOIN, { body: { lobby_id: answers[0]!.json.lobby.lobby_id } });
    const limited = await t.call('POST', JOIN, { body: { lobby_id: answers[0]!.json.lobby.lobby_id } });
    const body = expectErrorShape(limited, 429, 'API_RATE_LIMIT');
    expect(Date.parse(limited.headers.get('retry-after')!)).toBeGreaterThan(Date.now() - 1000);
    expect(body.metadata.retry_after_ms).toBeGreaterThan(0);
  });
});

const ENGINES: [string, boolean][] = [
  ['SQLite', true],
  ['PostgreSQL', PG_PRESENT],
];

describe.each(ENGINES)('concurrent finds on %s', (_name, present) => {
  it.skipIf(!present)('never put more players in a lobby than it holds: 22 finds, max 4 each, fill 5 lobbies and a sixth with 2', async () => {
    const t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { database: _name === 'PostgreSQL' ? await createTestDatabase() : undefined });
    try {
      const answers = await Promise.all(Array.from({ length: 22 }, () => t.call('POST', FIND, { body: { game_modes: ['duos'], max_players: 4 } })));
      expect(answers.map((a) => a.status)).toEqual(Array(22).fill(200));
      const perLobby = new Map<string, number>();
      for (const a of answers) perLobby.set(a.json.lobby.lobby_id, (perLobby.get(a.json.lobby.lobby_id) ?? 0) + 1);
      expect([...perLobby.values()].sort()).toEqual([2, 4, 4, 4, 4, 4]);
    } finally {
      await t.stop();
    }
  });
});
