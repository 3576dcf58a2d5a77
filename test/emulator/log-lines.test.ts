// The logs routes of a lobby: its recent lines, a watch for newer ones, and the export of a whole stream.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GAME_ID } from '../../src/emulator/index.js';
import { logTimestamp, RECENT_LINES, WATCH_LINES } from '../../src/emulator/services/logs.js';
import { expectErrorShape, startTestEmulator, type TestEmulator } from '../helpers/emulator.js';

const WATCH = { waitMs: 1_500, pollMs: 20, minMs: 300 };
const RFC3339_NS = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/;
const linesPath = (lobbyId: string, query: string, game = GAME_ID) => `/cloud/games/${game}/matchmaker/lobbies/${lobbyId}/logs?${query}`;
const exportPath = (lobbyId: string, game = GAME_ID) => `/cloud/games/${game}/matchmaker/lobbies/${lobbyId}/logs/export`;
const decode = (lines: string[]) => lines.map((l) => Buffer.from(l, 'base64').toString('utf8'));

describe('lobby logs routes', () => {
  let t: TestEmulator;
  let late: TestEmulator;
  beforeAll(async () => {
    t = await startTestEmulator({ startDelayMs: 0, readyDelayMs: 0 }, { logWatch: WATCH });
    // Its lobbies start in an hour: no process, no output.
    late = await startTestEmulator({ startDelayMs: 3_600_000 }, { logWatch: WATCH });
  });
  afterAll(async () => {
    await t.stop();
    await late.stop();
  });

  async function newLobby(emu = t): Promise<string> {
    const res = await emu.call('POST', '/matchmaker/lobbies/create', { token: emu.tokens.public, body: { game_mode: 'default' } });
    expect(res.status).toBe(200);
    return res.json.lobby.lobby_id;
  }
  const get = (lobbyId: string, query: string, emu = t) => emu.call('GET', linesPath(lobbyId, query), { token: emu.tokens.cloud });
  const append = (lobbyId: string, stream: 'std_out' | 'std_err', lines: (string | Buffer)[]) =>
    t.services.logs.append(lobbyId, stream, lines.map((l) => (typeof l === 'string' ? Buffer.from(l) : l)));

  it('answers the 256 most recent lines of the stream asked for, base64, oldest first, with RFC 3339 timestamps', async () => {
    const lobbyId = await newLobby();
    await append(lobbyId, 'std_out', Array.from({ length: 300 }, (_, i) => `out ${i}`));
    await append(lobbyId, 'std_err', ['only on stderr', Buffer.from([0xff, 0x00, 0x1b])]);
    const out = await get(lobbyId, 'stream=std_out');
    expect(out.status).toBe(200);
    expect(Object.keys(out.json).sort()).toEqual(['lines', 'timestamps', 'watch']);
    expect(out.json.lines).toHaveLength(RECENT_LINES);
    expect(decode(out.json.lines)).toEqual(Array.from({ length: 256 }, (_, i) => `out ${i + 44}`));
    expect(out.json.timestamps).toHaveLength(RECENT_LINES);
    for (const ts of out.json.timestamps) expect(ts).toMatch(RFC3339_NS);
    expect([...out.json.timestamps].sort()).toEqual(out.json.timestamps);
    expect(Math.abs(Date.parse(out.json.timestamps.at(-1)) - Date.now())).toBeLessThan(60_000);
    // The index is the newest line's time in nanoseconds.
    expect(out.json.watch.index).toMatch(/^\d+000$/);
    expect(logTimestamp(Number(out.json.watch.index.slice(0, -3)))).toBe(out.json.timestamps.at(-1));

    const err = await get(lobbyId, 'stream=std_err');
    expect(err.json.lines.map((l: string) => Buffer.from(l, 'base64'))).toEqual([Buffer.from('only on stderr'), Buffer.from([0xff, 0x00, 0x1b])]);
  });

  it('a watch answers the lines after its index once they arrive, never sooner than the minimum wait', async () => {
    const lobbyId = await newLobby();
    await append(lobbyId, 'std_out', ['before']);
    const { index } = (await get(lobbyId, 'stream=std_out')).json.watch;
    const started = performance.now();
    const watching = get(lobbyId, `stream=std_out&watch_index=${index}`);
    await new Promise((r) => setTimeout(r, 100));
    await append(lobbyId, 'std_out', ['after 1', 'after 2']);
    const res = await watching;
    expect(performance.now() - started).toBeGreaterThanOrEqual(WATCH.minMs);
    expect(decode(res.json.lines)).toEqual(['after 1', 'after 2']);
    // The next watch goes on from there: no line twice, none lost.
    await append(lobbyId, 'std_out', ['after 3']);
    expect(decode((await get(lobbyId, `stream=std_out&watch_index=${res.json.watch.index}`)).json.lines)).toEqual(['after 3']);
  });

  it('a watch answers at most 64 lines, and the next watch the rest', async () => {
    const lobbyId = await newLobby();
    await append(lobbyId, 'std_out', Array.from({ length: 100 }, (_, i) => `l${i}`));
    const first = await get(lobbyId, 'stream=std_out&watch_index=0');
    expect(decode(first.json.lines)).toEqual(Array.from({ length: WATCH_LINES }, (_, i) => `l${i}`));
    const second = await get(lobbyId, `stream=std_out&watch_index=${first.json.watch.index}`);
    expect(decode(second.json.lines)).toEqual(Array.from({ length: 36 }, (_, i) => `l${i + 64}`));
  });

  it('a watch with nothing new answers no lines after the longest wait, keeping its index', async () => {
    const lobbyId = await newLobby();
    await append(lobbyId, 'std_out', ['only']);
    const { index } = (await get(lobbyId, 'stream=std_out')).json.watch;
    const started = performance.now();
    const res = await get(lobbyId, `stream=std_out&watch_index=${index}`);
    expect(performance.now() - started).toBeGreaterThanOrEqual(WATCH.waitMs);
    expect(res.json).toEqual({ lines: [], timestamps: [], watch: { index } });
  });

  it('a lobby whose process has not started answers no lines (a watch after the minimum wait), and no export', async () => {
    const lobbyId = await newLobby(late);
    expect((await get(lobbyId, 'stream=std_out', late)).json).toEqual({ lines: [], timestamps: [], watch: { index: '0' } });
    const started = performance.now();
    expect((await get(lobbyId, 'stream=std_err&watch_index=0', late)).json.lines).toEqual([]);
    expect(performance.now() - started).toBeGreaterThanOrEqual(WATCH.minMs);
    const res = await late.call('POST', exportPath(lobbyId), { token: late.tokens.cloud, body: { stream: 'std_out' } });
    expect(expectErrorShape(res, 400, 'MATCHMAKER_LOBBY_NOT_STARTED').message).toContain(lobbyId);
  });

  it('exports a whole stream to a presigned stdout.txt / stderr.txt that needs no token', async () => {
    const lobbyId = await newLobby();
    await append(lobbyId, 'std_out', Array.from({ length: 300 }, (_, i) => `line ${i}`));
    await append(lobbyId, 'std_err', ['oops', 'nul\0inside']);
    const out = await t.call('POST', exportPath(lobbyId), { token: t.tokens.cloud, body: { stream: 'std_out' } });
    expect(out.status).toBe(200);
    expect(Object.keys(out.json)).toEqual(['url']);
    const url = new URL(out.json.url);
    expect(url.pathname).toMatch(/^\/_export\/[0-9a-f-]{36}\/stdout\.txt$/);
    const file = await fetch(out.json.url);
    expect(file.status).toBe(200);
    expect(file.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(file.headers.get('content-disposition')).toContain('stdout.txt');
    expect(await file.text()).toBe(Array.from({ length: 300 }, (_, i) => `line ${i}\n`).join(''));

    const err = await t.call('POST', exportPath(lobbyId), { token: t.tokens.cloud, body: { stream: 'std_err' } });
    expect(new URL(err.json.url).pathname).toMatch(/\/stderr\.txt$/);
    expect(await (await fetch(err.json.url)).text()).toBe('oops\nnul\uFFFDinside\n');
    // The signature binds the file: the stdout export's signature does not open it as stderr.txt.
    const forged = out.json.url.replace('stdout.txt', 'stderr.txt');
    expect((await fetch(forged)).status).toBe(403);
  });

  it('refuses bad input in one clear error each', async () => {
    const lobbyId = await newLobby();
    expectErrorShape(await get(lobbyId, ''), 400, 'API_BAD_QUERY_PARAMETER');
    expectErrorShape(await get(lobbyId, 'stream=stdout'), 400, 'API_BAD_QUERY_PARAMETER');
    expectErrorShape(await get(lobbyId, 'stream=std_out&watch_index=abc'), 400, 'API_BAD_QUERY_PARAMETER');
    expectErrorShape(await get(lobbyId, 'stream=std_out&watch_index=-1'), 400, 'API_BAD_QUERY_PARAMETER');
    expectErrorShape(await get('00000000-0000-4000-8000-000000000000', 'stream=std_out'), 404, 'API_NOT_FOUND');
    expectErrorShape(await t.call('GET', linesPath(lobbyId, 'stream=std_out')), 401, 'API_UNAUTHORIZED');
    // A lobby of another emulator's store is not this game's.
    expectErrorShape(await get(await newLobby(late), 'stream=std_out'), 404, 'API_NOT_FOUND');
    const post = (body: unknown) => t.call('POST', exportPath(lobbyId), { token: t.tokens.cloud, body });
    expectErrorShape(await post({}), 400, 'API_BAD_BODY');
    expectErrorShape(await post({ stream: 'stdout' }), 400, 'API_BAD_BODY');
    expectErrorShape(await post([]), 400, 'API_BAD_BODY');
  });
});
