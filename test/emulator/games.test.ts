// Games per CI job on one emulator: two games side by side never cross; a deleted or expired game takes its
// records and bytes with it and its tokens answer 401; expiry is swept once, by whichever replica claims it.
import crypto from 'node:crypto';
import { once } from 'node:events';
import { existsSync, readdirSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { openDatabase } from '../../src/emulator/stores/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID, ManualClock, startEmulator } from '../../src/emulator/index.js';
import { ADMIN_LOCKOUT_MS, ADMIN_MAX_FAILURES, ADMIN_TOKEN_MIN_LENGTH } from '../../src/emulator/services/admin.js';
import { createTestDatabase, PG_PRESENT, queryDatabase } from '../helpers/postgres.js';
import { admit, expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';
import { tempDir } from '../helpers/cli.js';
import { lobbyRow } from '../helpers/lobby-row.js';

interface CreatedGame {
  game_id: string;
  namespace_id: string;
  expire_ts: string;
  game_modes: string[];
  regions: { id: string; name: string }[];
  tokens: { cloud: string; public: string; dev: string };
}

async function createGame(t: TestEmulator, body: Record<string, unknown> = {}, admin?: string): Promise<CreatedGame> {
  const res = await t.call('POST', '/_emulator/games', { body, token: admin });
  if (res.status !== 200) throw new Error(`create game: ${res.status} ${res.text}`);
  return res.json;
}

/** A build of `size` bytes pushed whole (one part): create, PUT, complete. */
async function pushBuild(t: TestEmulator, game: CreatedGame, tag: string, size = 12): Promise<string> {
  const created = await t.call('POST', `/cloud/games/${game.game_id}/builds`, {
    token: game.tokens.cloud,
    body: { display_name: 'CI', image_tag: tag, image_file: { path: 'server.tar', content_length: size } },
  });
  expect(created.status).toBe(200);
  const [request] = created.json.image_presigned_requests;
  expect((await fetch(request.url, { method: 'PUT', body: Buffer.alloc(size, 7) })).status).toBe(200);
  expect((await t.call('POST', `/cloud/uploads/${created.json.upload_id}/complete`, { token: game.tokens.cloud, body: {} })).status).toBe(200);
  return created.json.build_id;
}

async function createLobby(t: TestEmulator, game: CreatedGame, gameMode: string): Promise<string> {
  const res = await t.call('POST', '/matchmaker/lobbies/create', { token: game.tokens.public, body: { game_mode: gameMode } });
  expect(res.status).toBe(200);
  // Its server admits the player, so the statistics count one.
  await admit(t.endpoint, res.json);
  return res.json.lobby.lobby_id;
}

const stats = (t: TestEmulator, game: CreatedGame) => t.call('GET', '/matchmaker/players/statistics', { token: game.tokens.public });

describe('two games side by side', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  let t: TestEmulator;
  let a: CreatedGame;
  let b: CreatedGame;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { clock });
    a = await createGame(t, { name: 'job a', game_modes: ['ctf'], regions: ['lnd-fra'] });
    b = await createGame(t, { name: 'job b' });
  });
  afterAll(() => t.stop());

  it('a game is made with its own namespace, game modes, regions, tokens and a 24 h lifetime by default', () => {
    expect(a.game_id).not.toBe(GAME_ID);
    expect(a.namespace_id).not.toBe(b.namespace_id);
    expect(a).toMatchObject({ game_modes: ['ctf'], regions: [{ id: 'lnd-fra', name: 'Frankfurt' }] });
    expect(b.game_modes).toEqual(['default', 'duos', 'squads']);
    expect(Date.parse(b.expire_ts) - clock.now()).toBe(24 * 3600 * 1000);
    expect(new Set([a.tokens.cloud, b.tokens.cloud, t.tokens.cloud]).size).toBe(3);
  });

  it('the same tag in both games; builds, lobbies, statistics and history never cross', async () => {
    const buildA = await pushBuild(t, a, 'game-server:ci');
    const buildB = await pushBuild(t, b, 'game-server:ci');
    // The tag is taken within a game only.
    const again = await t.call('POST', `/cloud/games/${a.game_id}/builds`, {
      token: a.tokens.cloud,
      body: { display_name: 'CI', image_tag: 'game-server:ci', image_file: { path: 'x', content_length: 1 } },
    });
    expectErrorShape(again, 400, 'BUILD_TAG_TAKEN');
    const listA = await t.call('GET', `/_emulator/builds?game_id=${a.game_id}`);
    expect(listA.json.builds.map((x: { build_id: string }) => x.build_id)).toEqual([buildA]);
    const listB = await t.call('GET', `/_emulator/builds?game_id=${b.game_id}`);
    expect(listB.json.builds.map((x: { build_id: string }) => x.build_id)).toEqual([buildB]);
    expect((await t.call('GET', '/_emulator/builds')).json.builds).toEqual([]);

    // A game mode of one game is unknown to the other.
    expectErrorShape(await t.call('POST', '/matchmaker/lobbies/create', { token: b.tokens.public, body: { game_mode: 'ctf' } }), 400, 'MATCHMAKER_GAME_MODE_NOT_FOUND');
    const lobbyA = await createLobby(t, a, 'ctf');
    await createLobby(t, b, 'duos');
    await createLobby(t, b, 'duos');
    expect((await stats(t, a)).json).toEqual({ player_count: 1, game_modes: { ctf: { player_count: 1, regions: { 'lnd-fra': { player_count: 1 } } } } });
    expect((await stats(t, b)).json.player_count).toBe(2);
    expect((await t.call('GET', '/matchmaker/players/statistics', { token: t.tokens.public })).json.player_count).toBe(0);

    // Stopping a's lobby changes nothing of b's.
    expect((await t.call('POST', `/_emulator/lobbies/${lobbyA}/stop`, { body: {} })).status).toBe(200);
    expect((await stats(t, a)).json.player_count).toBe(0);
    expect((await stats(t, b)).json.player_count).toBe(2);

    const exported = await t.call('POST', `/cloud/games/${b.game_id}/matchmaker/lobbies/export-history`, {
      token: b.tokens.cloud,
      body: { query_start: 0, query_end: clock.now() + 1 },
    });
    const csv = await (await fetch(exported.json.url)).text();
    expect(csv.trim().split('\n')).toHaveLength(3);
    expect(csv).not.toContain(lobbyA);
    expect(csv).toContain(b.namespace_id);
  });

  it("a token of one game on the other's paths is 403; a's lobby is not found through b's namespace", async () => {
    expectErrorShape(await t.call('POST', `/cloud/games/${b.game_id}/matchmaker/lobbies/export-history`, { token: a.tokens.cloud, body: { query_start: 0, query_end: 1 } }), 403, 'API_FORBIDDEN');
    const lobbyA = await createLobby(t, a, 'ctf');
    expectErrorShape(await t.call('GET', `/cloud/games/${b.game_id}/namespaces/${b.namespace_id}/logs/lobbies/${lobbyA}`, { token: b.tokens.cloud }), 404, 'API_NOT_FOUND');
    expectErrorShape(await t.call('GET', `/cloud/games/${b.game_id}/namespaces/${a.namespace_id}/logs/lobbies/${lobbyA}`, { token: b.tokens.cloud }), 404, 'API_NOT_FOUND');
    expect((await t.call('GET', `/cloud/games/${a.game_id}/namespaces/${a.namespace_id}/logs/lobbies/${lobbyA}`, { token: a.tokens.cloud })).status).toBe(200);
  });

  it("GET /cloud/games/{id} answers the token's game: its namespace, its regions, its players", async () => {
    const res = await t.call('GET', `/cloud/games/${a.game_id}`, { token: a.tokens.cloud });
    expect(res.status).toBe(200);
    expect(res.json.game).toMatchObject({ game_id: a.game_id, display_name: 'job a', namespaces: [{ namespace_id: a.namespace_id, name_id: 'prod' }, { name_id: 'staging' }] });
    expect(res.json.game.available_regions.map((r: { region_name_id: string }) => r.region_name_id)).toEqual(['lnd-fra']);
    expectErrorShape(await t.call('GET', `/cloud/games/${a.game_id}`, { token: b.tokens.cloud }), 403, 'API_FORBIDDEN');
  });

  it("a public token minted with a game's cloud token is that game's; another game's namespace is refused", async () => {
    const minted = await t.call('POST', `/cloud/games/${a.game_id}/namespaces/${a.namespace_id}/tokens/public`, { token: a.tokens.cloud });
    expect(minted.status).toBe(200);
    expect(minted.json.token).toBe(a.tokens.public);
    expectErrorShape(await t.call('POST', `/cloud/games/${a.game_id}/namespaces/${b.namespace_id}/tokens/public`, { token: a.tokens.cloud }), 404, 'API_NOT_FOUND');
    expectErrorShape(await t.call('POST', `/cloud/games/${b.game_id}/namespaces/${b.namespace_id}/tokens/public`, { token: a.tokens.cloud }), 403, 'API_FORBIDDEN');
  });

  it('GET /_emulator/games lists the seeded game first, then the created ones, without tokens', async () => {
    const list = await t.call('GET', '/_emulator/games');
    const ids = list.json.games.map((g: { game_id: string }) => g.game_id);
    // Oldest first; a and b were made in the same (standing) millisecond.
    expect(ids[0]).toBe(GAME_ID);
    expect(ids.slice(1).sort()).toEqual([a.game_id, b.game_id].sort());
    expect(list.json.games[0]).toMatchObject({ seeded: true, expire_ts: null });
    expect(list.text).not.toContain(a.tokens.cloud);
  });

  it('deleting a takes its records and bytes; its tokens answer 401; b is untouched', async () => {
    const builds = join(t.dataDir, 'builds');
    const before = readdirSync(builds);
    expect(before).toHaveLength(2);
    const deleted = await t.call('DELETE', `/_emulator/games/${a.game_id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ game_id: a.game_id, deleted: { lobbies: 2, players: 2, builds: 1, exports: 0 } });
    expect(readdirSync(builds)).toHaveLength(1);

    for (const res of [
      await stats(t, a),
      await t.call('POST', '/matchmaker/lobbies/create', { token: a.tokens.public, body: { game_mode: 'ctf' } }),
      await t.call('POST', `/cloud/games/${a.game_id}/matchmaker/lobbies/export-history`, { token: a.tokens.cloud, body: { query_start: 0, query_end: 1 } }),
      // Even on another game's path, a deleted game's token is 401 first.
      await t.call('POST', `/cloud/games/${b.game_id}/matchmaker/lobbies/export-history`, { token: a.tokens.cloud, body: { query_start: 0, query_end: 1 } }),
    ])
      expect(expectErrorShape(res, 401, 'API_UNAUTHORIZED').message).toContain('deleted or has expired');
    expectErrorShape(await t.call('DELETE', `/_emulator/games/${a.game_id}`), 404, 'API_NOT_FOUND');

    expect((await stats(t, b)).json.player_count).toBe(2);
    expect((await t.call('GET', `/_emulator/builds?game_id=${b.game_id}`)).json.builds).toHaveLength(1);
    const db = openDatabase(join(t.dataDir, 'emulator.db'), { timeout: 5000 });
    try {
      expect(db.prepare('SELECT COUNT(*) FROM lobbies WHERE namespace_id = ?').pluck().get(a.namespace_id)).toBe(0);
      expect(db.prepare('SELECT COUNT(*) FROM builds WHERE game_id = ?').pluck().get(a.game_id)).toBe(0);
      // a's row stays, its deletion begun, until the second purge.
      expect(db.prepare('SELECT game_id FROM games WHERE delete_ts IS NULL').pluck().all()).toEqual([b.game_id]);
      expect(db.prepare('SELECT delete_ts FROM games WHERE game_id = ?').pluck().get(a.game_id)).toBe(clock.now());
      expect(db.prepare('SELECT COUNT(*) FROM lobbies WHERE namespace_id = ?').pluck().get(b.namespace_id)).toBe(2);
    } finally {
      db.close();
    }
  });

  it("what a request that passed its token check just before the deletion writes is purged the second time, with a's row", async () => {
    const store = (t.services.games as unknown as { deps: { store: import('../../src/emulator/stores/store.js').Store } }).deps.store;
    // A lobby create of a's, checked before the deletion, inserting after it.
    const lobbyId = crypto.randomUUID();
    await store.insertLobby(
      lobbyRow({ lobby_id: lobbyId, namespace_id: a.namespace_id, game_mode: 'ctf', region_id: 'lnd-fra', region_name: 'Frankfurt' }, clock.now()),
      { player_id: crypto.randomUUID(), source_ip: '', registration_ms: 120_000, connected: true },
    );
    await t.services.games.sweep();
    expect(await store.getLobby(lobbyId)).toBeDefined();
    clock.advance(5 * 60 * 1000 + 1);
    await t.services.games.sweep();
    expect(await store.getLobby(lobbyId)).toBeUndefined();
    expect(await store.getGame(a.game_id)).toBeUndefined();
    expect((await stats(t, b)).json.player_count).toBe(2);
  });

  it('a part whose body was still arriving when its game was deleted is not kept: 404, and no file left', async () => {
    const c = await createGame(t, { name: 'job c' });
    const created = await t.call('POST', `/cloud/games/${c.game_id}/builds`, {
      token: c.tokens.cloud,
      body: { display_name: 'c', image_tag: 'game-server:ci', image_file: { path: 'x.tar', content_length: 12 } },
    });
    const url = new URL(created.json.image_presigned_requests[0].url);
    const socket = connect(Number(url.port), url.hostname);
    await once(socket, 'connect');
    let answer = '';
    socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
    // Half the body, then the game is deleted (and purged), then the rest.
    socket.write(`PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: 12\r\nConnection: close\r\n\r\nabcdef`);
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await t.call('DELETE', `/_emulator/games/${c.game_id}`)).status).toBe(200);
    socket.write('ghijkl');
    await once(socket, 'close');
    expect(answer).toMatch(/^HTTP\/1\.1 404 /);
    expect(existsSync(join(t.dataDir, 'uploads', created.json.upload_id))).toBe(false);
  });

  it('the seeded game cannot be deleted; bad bodies are refused', async () => {
    expectErrorShape(await t.call('DELETE', `/_emulator/games/${GAME_ID}`), 403, 'API_FORBIDDEN');
    expectErrorShape(await t.call('POST', '/_emulator/games', { body: { ttl_seconds: 30 * 86400 + 1 } }), 400, 'API_BAD_BODY');
    expectErrorShape(await t.call('POST', '/_emulator/games', { body: { game_modes: [] } }), 400, 'API_BAD_BODY');
    expectErrorShape(await t.call('POST', '/_emulator/games', { body: { regions: ['Not A Region'] } }), 400, 'API_BAD_BODY');
    expectErrorShape(await t.call('POST', '/_emulator/games', { body: { name: 3 } }), 400, 'API_BAD_BODY');
  });
});

/** Where two replicas keep their records: SQLite in their shared data directory, or one PostgreSQL database. */
const RECORDS: [name: string, present: boolean, database: () => Promise<string | undefined>][] = [
  ['SQLite', true, async () => undefined],
  ['PostgreSQL', PG_PRESENT, createTestDatabase],
];

/** The games left, and how many lobbies, read straight from the records. */
async function recordsLeft(dataDir: string, database: string | undefined): Promise<{ games: string[]; lobbies: number }> {
  if (database !== undefined) {
    const games = await queryDatabase<{ game_id: string }>(database, 'SELECT game_id FROM games ORDER BY game_id');
    const [{ n }] = await queryDatabase<{ n: number }>(database, 'SELECT COUNT(*)::int AS n FROM lobbies');
    return { games: games.map((g) => g.game_id), lobbies: n! };
  }
  const db = openDatabase(join(dataDir, 'emulator.db'), { timeout: 5000 });
  try {
    return { games: db.prepare<[], string>('SELECT game_id FROM games ORDER BY game_id').pluck().all(), lobbies: db.prepare<[], number>('SELECT COUNT(*) FROM lobbies').pluck().get()! };
  } finally {
    db.close();
  }
}

describe.each(RECORDS)('expiry, records in %s', (_name, present, records) => {
  const it_ = it.skipIf(!present);
  it_('an expired game answers 401 at once and is removed, records and bytes, by one of two replicas', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const dataDir = tempDir();
    const database = await records();
    const one = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { clock, dataDir, database });
    const two = await startTestEmulator({}, { clock, dataDir, database });
    try {
      const short = await createGame(one, { ttl_seconds: 60 });
      const long = await createGame(two, { ttl_seconds: 3600 });
      await pushBuild(one, short, 'game-server:ci');
      await pushBuild(two, long, 'game-server:ci');
      await createLobby(one, short, 'default');
      await createLobby(two, long, 'default');

      clock.advance(59_999);
      expect((await stats(two, short)).json.player_count).toBe(1);
      clock.advance(1);
      expectErrorShape(await stats(two, short), 401, 'API_UNAUTHORIZED');
      // Both replicas sweep at once; the one UPDATE hands the game to one of them.
      await Promise.all([one.services.games.sweep(), two.services.games.sweep(), one.services.games.sweep()]);
      expect(readdirSync(join(dataDir, 'builds'))).toHaveLength(1);
      expect(existsSync(join(dataDir, 'uploads'))).toBe(true);
      // Its row stays, its deletion begun, until a sweep purges it again and removes it.
      expect(await recordsLeft(dataDir, database)).toEqual({ games: [long.game_id, short.game_id].sort(), lobbies: 1 });
      clock.advance(5 * 60 * 1000 + 1);
      await Promise.all([one.services.games.sweep(), two.services.games.sweep()]);
      expect(await recordsLeft(dataDir, database)).toEqual({ games: [long.game_id], lobbies: 1 });
      const list = await two.call('GET', '/_emulator/games');
      expect(list.json.games.map((g: { game_id: string }) => g.game_id)).toEqual([GAME_ID, long.game_id]);
      expect((await stats(one, long)).json.player_count).toBe(1);
    } finally {
      await two.close();
      await one.stop();
    }
  });

  it_('the sweep claims each expired game once, across store connections', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const dataDir = tempDir();
    const database = await records();
    const one = await startTestEmulator({}, { clock, dataDir, database });
    const two = await startTestEmulator({}, { clock, dataDir, database });
    try {
      const games = await Promise.all([1, 2, 3].map(() => createGame(one, { ttl_seconds: 1 })));
      clock.advance(1000);
      // Straight at the stores: which connection claimed which game.
      type Claims = { expired: string[]; stale: string[] };
      const stores = [one, two].map((t) => (t.services.games as unknown as { deps: { store: { claimExpiredGames(now: number, stale: number): Promise<Claims> } } }).deps.store);
      const [x, y] = await Promise.all(stores.map((s) => s.claimExpiredGames(clock.now(), 60_000)));
      expect([...x!.expired, ...y!.expired].sort()).toEqual(games.map((g) => g.game_id).sort());
      expect([...x!.stale, ...y!.stale]).toEqual([]);
      // A deletion begun longer ago than the stale limit (purged once, or its process died) is taken up again, once.
      clock.advance(60_001);
      const [p, q] = await Promise.all(stores.map((s) => s.claimExpiredGames(clock.now(), 60_000)));
      expect([...p!.stale, ...q!.stale].sort()).toEqual(games.map((g) => g.game_id).sort());
      expect([...p!.expired, ...q!.expired]).toEqual([]);
    } finally {
      await two.close();
      await one.stop();
    }
  });
});

describe('the admin token', () => {
  const clock = new ManualClock(Date.UTC(2026, 0, 1));
  const ADMIN = 'admin-token-for-tests-0123456789';
  let t: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({}, { clock, adminToken: ADMIN });
  });
  afterAll(() => t.stop());

  it('no token or a wrong one is 401 in the error shape; the right one passes; health needs none', async () => {
    expect(expectErrorShape(await t.call('GET', '/_emulator/games'), 401, 'API_UNAUTHORIZED').message).toContain('Bearer <admin token>');
    expect(expectErrorShape(await t.call('GET', '/_emulator/games', { token: 'nope' }), 401, 'API_UNAUTHORIZED').message).toContain('wrong');
    expectErrorShape(await t.call('POST', '/_emulator/games', { body: {} }), 401, 'API_UNAUTHORIZED');
    expectErrorShape(await t.call('GET', '/_emulator/builds', { token: t.tokens.cloud }), 401, 'API_UNAUTHORIZED');
    expect((await t.call('GET', '/_emulator/games', { token: ADMIN })).status).toBe(200);
    expect((await t.call('GET', '/_emulator/health')).status).toBe(200);
    // The service's own routes are untouched by it.
    expect((await t.call('GET', '/matchmaker/players/statistics', { token: t.tokens.public })).status).toBe(200);
  });

  it(`${ADMIN_MAX_FAILURES} wrong tries in a while are answered 429 with Retry-After, the right token never, and the wait ends when it says`, async () => {
    const as = (token: string) => t.call('GET', '/_emulator/games', { token });
    // The wrong tries of the test before are a window ago: this one counts from zero.
    clock.advance(ADMIN_LOCKOUT_MS);
    for (let i = 0; i < ADMIN_MAX_FAILURES; i++) expect((await as(`wrong-${i}`)).status).toBe(401);
    const locked = await as('wrong-again');
    expectErrorShape(locked, 429, 'API_RATE_LIMIT');
    expect(locked.headers.get('retry-after')).toBe(String(ADMIN_LOCKOUT_MS / 1000));
    // The holder of the token is never locked out by someone else's guesses.
    expect((await as(ADMIN)).status).toBe(200);
    clock.advance(ADMIN_LOCKOUT_MS - 1000);
    expect((await as('wrong-again')).headers.get('retry-after')).toBe('1');
    expect((await as(ADMIN)).status).toBe(200);
    // Retry-After said 1 s: after it, a wrong try is a 401 again, and the count starts afresh.
    clock.advance(1000);
    expect((await as('wrong-again')).status).toBe(401);
    for (let i = 0; i < ADMIN_MAX_FAILURES - 1; i++) expect((await as(`wrong-${i}`)).status).toBe(401);
    expect((await as('wrong-last')).status).toBe(429);
    clock.advance(ADMIN_LOCKOUT_MS);
  });

  it('one wrong try a minute never locks anyone out', async () => {
    for (let i = 0; i < ADMIN_MAX_FAILURES * 2; i++) {
      expect((await t.call('GET', '/_emulator/games', { token: `slow-guess-${i}` })).status).toBe(401);
      clock.advance(ADMIN_LOCKOUT_MS);
    }
  });

  it(`an admin token under ${ADMIN_TOKEN_MIN_LENGTH} characters: the emulator does not start`, async () => {
    const dataDir = tempDir();
    await expect(startEmulator({ dataDir, adminToken: 'x'.repeat(ADMIN_TOKEN_MIN_LENGTH - 1) })).rejects.toThrow(
      `the admin token must be at least ${ADMIN_TOKEN_MIN_LENGTH} characters; this one has ${ADMIN_TOKEN_MIN_LENGTH - 1}`,
    );
    const emu = await startEmulator({ dataDir, adminToken: 'x'.repeat(ADMIN_TOKEN_MIN_LENGTH) });
    await emu.close();
  });
});
