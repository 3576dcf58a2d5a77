// Answers the service's spec allows but nobody expects, served by a tiny local HTTP server (the emulator never
// sends them): each one crashed, hung or printed garbage before. The CLI must hold: exit as documented, one line
// on stderr for an error, no stack trace, no NaN/Infinity, nothing half-written.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InterruptedError } from '../../src/errors.js';
import { plain, runCli, tempDir } from '../helpers/cli.js';

const GAME = '11111111-2222-4333-8444-555555555555';
const NS = '66666666-7777-4888-9999-000000000000';
const LOBBY = '2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6';
const COLUMNS =
  'lobby_id,namespace_id,namespace_name,region_id,region_name,tier_name,version_id,version_name,lobby_group_id,lobby_group_name,start_ts,stop_ts,total_uptime_ms,query_uptime_ms';

/** What the server answers next, per route: a JSON text (sent as is) or a CSV body. */
const answers: { logs?: string | (() => string); lines?: string | ((url: URL) => string); watchDelayMs?: number; game?: { status: number; body: string }; stats?: string; csv?: string | Buffer; onStats?: (count: number) => void } = {};
let statsServed = 0;
/** The lines route's requests, as received. */
const linesAsked: URL[] = [];
let gameServed = 0;
let server: http.Server;
let base = '';

beforeAll(async () => {
  server = http.createServer((req, res) => {
    const url = req.url ?? '';
    const send = (status: number, body: string | Buffer, type = 'application/json') => {
      res.writeHead(status, { 'content-type': type, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    };
    req.resume();
    if (url.includes('/logs/lobbies/')) return send(200, (typeof answers.logs === 'function' ? answers.logs() : answers.logs) ?? '{}');
    if (/\/matchmaker\/lobbies\/[^/]+\/logs\?/.test(url)) {
      const asked = new URL(url, base);
      linesAsked.push(asked);
      const body = (typeof answers.lines === 'function' ? answers.lines(asked) : answers.lines) ?? '{"lines":[],"timestamps":[],"watch":{"index":"0"}}';
      // A watch held as the service holds one, until a line comes.
      if (asked.searchParams.has('watch_index') && answers.watchDelayMs) return void setTimeout(() => send(200, body), answers.watchDelayMs);
      return send(200, body);
    }
    if (url === `/cloud/games/${GAME}` && answers.game) {
      gameServed++;
      return send(answers.game.status, answers.game.body);
    }
    if (url.startsWith('/matchmaker/players/statistics')) {
      answers.onStats?.(++statsServed);
      return send(200, answers.stats ?? '{}');
    }
    if (/\/matchmaker\/lobbies\/[^/]+\/logs\/export$/.test(url)) return send(200, JSON.stringify({ url: 'stdout.txt' }));
    if (url.endsWith('/matchmaker/lobbies/export-history')) return send(200, JSON.stringify({ url: `${base}/export.csv` }));
    if (url === '/export.csv') return send(200, answers.csv ?? '', 'text/csv');
    send(404, JSON.stringify({ code: 'API_NOT_FOUND', message: 'no such route' }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const env = () => ({ GAMEHOST_ENDPOINT: base, GAMEHOST_TOKEN: 'cloud.token', GAMEHOST_NAMESPACE_TOKEN: 'pub_ns.token', GAMEHOST_GAME: GAME, GAMEHOST_NAMESPACE: NS });
const GARBAGE = /NaN|Infinity|undefined|Invalid Date/;

function logsBody(lobby: Record<string, unknown>, metrics?: Record<string, unknown>): string {
  return JSON.stringify({
    lobby: {
      lobby_id: LOBBY,
      namespace_id: NS,
      lobby_group_name_id: 'default',
      region_id: 'lnd-atl',
      create_ts: '2026-11-21T10:42:03.000Z',
      status: { running: {} },
      ...lobby,
    },
    ...(metrics ? { metrics: { job: 'job-1', ...metrics } } : {}),
  });
}

describe('lobby logs against hostile answers', () => {
  it('125,000 CPU and memory samples: rendered, not a stack overflow', async () => {
    const n = 125_000;
    answers.logs = logsBody({}, { cpu: Array.from({ length: n }, (_, i) => i % 100), memory: Array.from({ length: n }, (_, i) => i * 1024) });
    for (const tty of [false, true]) {
      const r = await runCli(['lobby', 'logs', LOBBY, ...(tty ? ['--chart'] : [])], { env: env(), tty, columns: 80 });
      expect(r.stderr).not.toMatch(/unexpected failure|Maximum call stack/);
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(GARBAGE);
    }
  });

  it('--chart with samples near ±1.8e308 (and 1e999, which JSON reads as Infinity) ends, with finite labels', async () => {
    // Written as text: JSON.stringify cannot write 1e999.
    answers.logs = logsBody({}, { cpu: [1, 2] }).replace('"cpu":[1,2]', '"cpu":[1.7e308,-1.79e308,5,1e999,-1e999],"memory":[1.79e308,0,-1.7e308]');
    for (const columns of [40, 80, 120]) {
      const r = await runCli(['lobby', 'logs', LOBBY, '--chart', '--utc'], { env: env(), tty: true, columns });
      expect(r.code).toBe(0);
      const text = plain(r.stdout);
      expect(text).not.toMatch(GARBAGE);
      expect(text).toMatch(/CPU/);
    }
  });

  it('a leap second is a time, a time that does not parse is shown as given, out-of-order times never read +-', async () => {
    answers.logs = logsBody({
      create_ts: '2016-12-31T23:59:60Z',
      start_ts: 'sometime on tuesday',
      ready_ts: '2016-12-31T22:59:00Z',
    });
    const r = await runCli(['lobby', 'logs', LOBBY, '--utc'], { env: env(), tty: true, columns: 100 });
    expect(r.code).toBe(0);
    const text = plain(r.stdout);
    expect(text).not.toMatch(GARBAGE);
    expect(text).toMatch(/created +2017-01-01 00:00:00 UTC/);
    expect(text).toMatch(/started +sometime on tuesday/);
    expect(text).not.toMatch(/\+-/);
    const piped = await runCli(['lobby', 'logs', LOBBY], { env: env() });
    expect(piped.stdout).toMatch(/^created_ts\t2017-01-01T00:00:00Z$/m);
    expect(piped.stdout).toMatch(/^started_ts\tsometime on tuesday$/m);
    expect(piped.stdout).not.toMatch(GARBAGE);
  });

  it('a running lobby reads "not yet … running … so far"; one sample is "1 sample"', async () => {
    answers.logs = logsBody({ start_ts: '2026-11-21T10:42:04.000Z', ready_ts: '2026-11-21T10:42:05.000Z' }, { cpu: [12.5], memory: [] });
    const r = await runCli(['lobby', 'logs', LOBBY, '--chart', '--utc'], { env: env(), tty: true, columns: 100 });
    const text = plain(r.stdout);
    expect(text).toMatch(/stopped +not yet +running .* so far/);
    expect(text).not.toMatch(/stopped +running/);
    expect(text).toMatch(/ 1 sample /);
  });

  it('--json prints the body as received: integers beyond 2^53 keep their digits', async () => {
    answers.logs = logsBody({}, { cpu: [1], memory: [1] }).replace('"memory":[1]', '"memory":[9007199254740993,9223372036854775807]');
    const r = await runCli(['lobby', 'logs', LOBBY, '--json'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('9007199254740993');
    expect(r.stdout).toContain('9223372036854775807');
  });
});

describe('lobby logs: log lines the spec allows but nobody expects', () => {
  const b64 = (text: string) => Buffer.from(text).toString('base64');
  const linesBody = (lines: string[], timestamps: string[], index = '1') => JSON.stringify({ lines, timestamps, watch: { index } });
  const run = (args: string[], opts: { tty?: boolean } = {}) => runCli(['lobby', 'logs', LOBBY, ...args], { env: { ...env(), NO_COLOR: '1' }, columns: 80, ...opts });

  it('lines that are not base64: shown as sent (sanitised), one warning; the rest decoded', async () => {
    answers.logs = logsBody({});
    answers.lines = linesBody(['not base64 at all!', b64('fine'), 'abc=d', '\x1b]0;pwned\x07x'], []);
    const r = await run(['-q', '--stream', 'stdout']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('not base64 at all!\nfine\nabc=d\nx\n');
    expect(r.stderr).toBe('warning: the service sent lines that are not base64; they are shown as sent\n');
  });

  it('50,000 lines in one answer (the service sends 256 at most): all printed, on a terminal too, and -n takes the last ones quickly', async () => {
    const n = 50_000;
    answers.logs = logsBody({});
    answers.lines = linesBody(Array.from({ length: n }, (_, i) => b64(`line ${i}`)), Array.from({ length: n }, (_, i) => `2026-11-21T10:42:03.${String(i).padStart(9, '0')}Z`));
    const piped = await run(['-q', '--stream', 'stdout']);
    expect(piped.code).toBe(0);
    expect(piped.stdout.split('\n')).toHaveLength(n + 1);
    const tty = await run(['--stream', 'stdout', '--utc'], { tty: true });
    expect(tty.stderr).not.toMatch(/unexpected failure|Maximum call stack/);
    expect(plain(tty.stdout)).toMatch(/\n10:42:03\.000 line 49999\n$/);
    expect((await run(['-q', '--stream', 'stdout', '-n', '2'])).stdout).toBe('line 49998\nline 49999\n');
  });

  it('fewer timestamps than lines, times that do not parse, a leap second, times out of order: shown, never NaN', async () => {
    answers.logs = logsBody({});
    answers.lines = linesBody([b64('a'), b64('b'), b64('c'), b64('d')], ['2016-12-31T23:59:60Z', 'sometime\ttuesday', '2016-12-31T22:00:00.5+01:00']);
    const tty = await run(['--stream', 'stdout', '--utc'], { tty: true });
    expect(tty.code).toBe(0);
    const lines = plain(tty.stdout).split('\nLogs  stdout\n')[1];
    expect(lines).toBe('00:00:00.000 a\nsometime tuesday b\n21:00:00.500 c\n- d\n');
    expect(tty.stdout).not.toMatch(GARBAGE);
    const piped = await run(['-q', '--stream', 'stdout', '--timestamps']);
    expect(piped.stdout).toBe('2016-12-31T23:59:60Z\ta\nsometime tuesday\tb\n2016-12-31T22:00:00.5+01:00\tc\n-\td\n');
    // --since cannot place a line without a time: left out.
    expect((await run(['-q', '--stream', 'stdout', '--since', '2000-01-01'])).stdout).toBe('a\nc\n');
  });

  it.each([
    ['not an object', '[1,2]', 'the answer is not an object'],
    ['lines not a list', '{"lines":"YQ==","timestamps":[],"watch":{"index":"1"}}', '`lines` is not a list'],
    ['a line that is a number', '{"lines":[1],"timestamps":[],"watch":{"index":"1"}}', '`lines` holds something other than text'],
    ['no watch index', '{"lines":[],"timestamps":[],"watch":{}}', '`watch.index` is not text'],
  ])('%s: one line, exit 1, no stack trace', async (_name, body, why) => {
    answers.logs = logsBody({});
    answers.lines = body;
    const r = await run([]);
    expect(r.code).toBe(1);
    expect(r.stderr.split('\n')[0]).toBe(`error: the service's log lines are unusable: ${why}`);
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('--follow against a watch that answers at once, the same lines again, with an odd index: each line once, no tight loop', async () => {
    let summaries = 0;
    const running = logsBody({});
    const stopped = logsBody({ status: { stopped: { stop_ts: '2026-11-21T10:50:00Z', failed: false, exit_code: 0 } } });
    answers.logs = () => (++summaries > 4 ? stopped : running);
    const index = '../../x?y=1&z= é';
    answers.lines = (url) =>
      url.searchParams.has('watch_index')
        ? linesBody([b64('old'), b64('new')], ['2026-11-21T10:42:03Z', '2026-11-21T10:42:04Z'], index)
        : linesBody([b64('old')], ['2026-11-21T10:42:03Z'], index);
    linesAsked.length = 0;
    const started = performance.now();
    const r = await run(['-q', '--follow', '--stream', 'stdout', '--interval', '0.1']);
    const took = performance.now() - started;
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('old\nnew\n');
    const watches = linesAsked.filter((u) => u.searchParams.has('watch_index'));
    // The index goes back exactly as the service gave it.
    for (const u of watches) expect(u.searchParams.get('watch_index')).toBe(index);
    // At most one watch per 500 ms (WATCH_FLOOR_MS), however fast the service answers.
    expect(watches.length).toBeLessThanOrEqual(Math.ceil(took / 500) + 1);
    answers.logs = undefined;
    answers.lines = undefined;
  });

  it('--export whose link is not a URL: one line, exit 1, no file', async () => {
    const dir = tempDir();
    const r = await runCli(['lobby', 'logs', LOBBY, '--export', 'x.txt'], { env: env(), cwd: dir });
    expect([r.code, r.stderr]).toEqual([1, 'error: the service\'s log export url is not an absolute http(s) URL: "stdout.txt"\n']);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it('--follow: a watch the service holds longer than --timeout is waited for (the service may hold one 40 s)', async () => {
    let summaries = 0;
    answers.logs = () => (++summaries > 1 ? logsBody({ status: { stopped: { stop_ts: '2026-11-21T10:50:00Z', failed: true, exit_code: 2 } } }) : logsBody({}));
    answers.lines = (url) => (url.searchParams.has('watch_index') ? linesBody([b64('held')], ['2026-11-21T10:42:04Z'], '2') : linesBody([], [], '1'));
    answers.watchDelayMs = 1500;
    try {
      // The summary says stopped only once the held watch answered: the follow ends after it.
      const r = await run(['-q', '--follow', '--stream', 'stdout', '--interval', '1.6', '--timeout', '0.2']);
      expect([r.code, r.stdout]).toEqual([0, 'held\n']);
      expect(r.stderr).toBe('');
    } finally {
      answers.watchDelayMs = undefined;
      answers.logs = undefined;
      answers.lines = undefined;
    }
  });
});

describe('lobby logs: the region names, when the service cannot tell them', () => {
  const REGION = '8d38dfcb-f2cc-56f0-8353-6a3423b04e15';
  const region = { region_id: REGION, region_name_id: 'lnd-atl', region_display_name: 'Atlanta', provider: 'p', universal_region: 'atlanta', provider_display_name: 'P' };
  it.each([
    ['no such route (404)', undefined],
    ['refused (403)', { status: 403, body: JSON.stringify({ code: 'API_FORBIDDEN', message: 'no', ray_id: 'r' }) }],
    ['failing (500, retried)', { status: 500, body: JSON.stringify({ code: 'ERROR', message: 'boom', ray_id: 'r' }) }],
    ['not JSON', { status: 200, body: '<html>' }],
    ['a game without this region', { status: 200, body: JSON.stringify({ game: { game_id: GAME, available_regions: [{ ...region, region_id: NS }] }, watch: { index: '1' } }) }],
    ['regions of the wrong type', { status: 200, body: JSON.stringify({ game: { available_regions: { [REGION]: 'Atlanta' } } }) }],
  ])('%s: the region id, exit 0, nothing on stderr', async (_name, game) => {
    answers.logs = logsBody({ region_id: REGION });
    answers.game = game;
    for (const tty of [false, true]) {
      const before = gameServed;
      const r = await runCli(['lobby', 'logs', LOBBY], { env: env(), tty, columns: 80 });
      expect([r.code, r.stderr]).toEqual([0, '']);
      // One attempt: a lookup the command can do without is not retried (a 500 would otherwise cost the waits).
      expect(gameServed - before).toBe(game ? 1 : 0);
      expect(plain(r.stdout)).toMatch(tty ? new RegExp(`^Region {5}${REGION}$`, 'm') : new RegExp(`^region_id\t${REGION}\nnamespace_id\t`, 'm'));
    }
  });

  it('a game listing it (its id in capitals): the name, whatever else the list holds', async () => {
    answers.logs = logsBody({ region_id: REGION });
    answers.game = { status: 200, body: JSON.stringify({ game: { game_id: GAME, available_regions: [null, { region_id: 3 }, { ...region, region_id: REGION.toUpperCase() }] }, watch: { index: '1' } }) };
    const r = await runCli(['lobby', 'logs', LOBBY], { env: env(), tty: true, columns: 80 });
    expect(r.code).toBe(0);
    expect(plain(r.stdout)).toMatch(/^Region {5}Atlanta \(lnd-atl\)$/m);
  });
});

describe('stats --json against big numbers', () => {
  const body = '{"player_count":9007199254740993,"game_modes":{"default":{"player_count":9223372036854775807,"regions":{}},"e":{"player_count":0,"regions":{}}}}';

  it('prints the service body losslessly, indented as every --json is', async () => {
    answers.stats = body;
    const r = await runCli(['stats', '--json'], { env: env() });
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('"player_count": 9007199254740993');
    expect(r.stdout).toContain('"player_count": 9223372036854775807');
    expect(r.stdout).toContain('"regions": {}');
    // The same document a parser reads from the body itself.
    expect(JSON.parse(r.stdout)).toEqual(JSON.parse(body));
  });

  it('--watch --json: one line per changed body, digits intact; Ctrl-C ends it with 130 and no error', async () => {
    answers.stats = body;
    const controller = new AbortController();
    // Ctrl-C while the third request is in flight: two answers, the same body, so one line.
    statsServed = 0;
    answers.onStats = (n) => n === 3 && controller.abort(new InterruptedError('SIGINT'));
    const r = await runCli(['stats', '--watch', '0.1', '--json'], { env: env(), signal: controller.signal });
    answers.onStats = undefined;
    expect(r.code).toBe(130);
    expect(r.stderr).toBe('');
    const lines = r.stdout.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(body);
  });
});

describe('history export refuses what is not the service CSV', () => {
  const row = (id: string) => `${id},${NS},prod,lnd-atl,Atlanta,basic,v,v1,g,default,1763700000000,,60000,60000`;

  it.each([
    ['no header', `${row(LOBBY)}\n${row(LOBBY)}\n`, /line 1: no lobby history header/],
    ['a header without the documented columns', 'lobby_id,region_id\nx,y\n', /line 1: the header lacks namespace_id, .*query_uptime_ms/],
    ['an unclosed quote', `${COLUMNS}\n${row(LOBBY)}\n"${row('b')}\n${row('c')}\n`, /line 3: a quoted field is never closed/],
    ['a short row', `${COLUMNS}\n${row(LOBBY)}\n${LOBBY},x\n`, /line 3: 2 fields, but the header has 14/],
    ['an HTML page', '<!DOCTYPE html>\n<html><body>Sign in</body></html>\n', /line 1: no lobby history header/],
    ['binary', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 7919) % 256)), /line \d+: (not UTF-8 text|no lobby history header)/],
    ['empty lines alone', '\n\r\n\n', /line 1: no header, only empty lines/],
  ])('%s: exit 1 with the line and the problem, and no file left', async (_name, csv, message) => {
    answers.csv = csv;
    const dir = tempDir();
    for (const format of ['csv', 'json']) {
      const r = await runCli(['history', 'export', '--since', '1h', '--format', format, '-o', path.join(dir, `h.${format}`)], { env: env(), cwd: dir });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toMatch(/^error: the export is not the service's lobby history CSV: /);
      expect(r.stderr).not.toMatch(/unexpected failure|at .*\.js:\d+/);
      expect(fs.readdirSync(dir)).toEqual([]);
    }
  });

  describe('a 0-byte export is zero lobbies (the service writes its header with the first record)', () => {
    const window = ['--from', '2026-01-01T00:00:00Z', '--to', '2026-01-02T00:00:00Z', '--utc'];
    const run = (args: string[], opts: { tty?: boolean; cwd?: string } = {}) => {
      answers.csv = '';
      return runCli(['history', 'export', ...window, ...args], { env: { ...env(), NO_COLOR: '1' }, ...opts });
    };

    it('csv: the file as received, 0 bytes; the summary says none ran', async () => {
      const dir = tempDir();
      const r = await run(['-o', 'h.csv'], { cwd: dir });
      expect([r.code, fs.readFileSync(path.join(dir, 'h.csv'), 'utf8')]).toEqual([0, '']);
      expect(r.stderr).toBe('Wrote 0 lobbies (0 B) to h.csv\nWindow   2026-01-01T00:00:00Z → 2026-01-02T00:00:00Z (1d 0h)\nLobbies  none ran in this window\n');
      const piped = await run(['-o', '-']);
      expect([piped.code, piped.stdout]).toEqual([0, '']);
    });

    it('json: no lines, and --json says 0 rows and 0 lobbies', async () => {
      const dir = tempDir();
      const r = await run(['--format', 'json', '-o', 'h.jsonl', '--json'], { cwd: dir });
      expect(r.code).toBe(0);
      expect(fs.readFileSync(path.join(dir, 'h.jsonl'), 'utf8')).toBe('');
      expect(JSON.parse(r.stdout)).toMatchObject({ rows: 0, bytes: 0, summary: { lobbies: 0, running: 0, stopped: 0, regions: [], game_modes: [] } });
    });

    it('table: no lobbies, in a terminal and piped', async () => {
      const tty = await run(['--format', 'table'], { tty: true });
      expect([tty.code, tty.stdout]).toEqual([0, 'No lobbies ran in this window.\n']);
      const piped = await run(['--format', 'table']);
      expect([piped.code, piped.stdout]).toEqual([0, '']);
      expect(piped.stderr).toContain('Lobbies  none ran in this window');
    });
  });

  it('-o - with csv: bytes that do not parse never reach stdout', async () => {
    answers.csv = '<html>nope</html>\n';
    const r = await runCli(['history', 'export', '--since', '1h', '-o', '-'], { env: env() });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
  });

  it('--format table with 125,000 rows: rendered in full, not a stack overflow; ids whole at 80 columns', async () => {
    const n = 125_000;
    const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    answers.csv = COLUMNS + '\n' + Array.from({ length: n }, (_, i) => row(id(i))).join('\n') + '\n';
    const r = await runCli(['history', 'export', '--since', '1h', '--format', 'table', '--utc'], { env: env(), tty: true, columns: 80 });
    expect(r.stderr).not.toMatch(/unexpected failure|Maximum call stack/);
    expect(r.code).toBe(0);
    const lines = plain(r.stdout).trimEnd().split('\n');
    expect(lines).toHaveLength(1 + n + 2);
    expect(lines[1]!.startsWith(id(0) + ' ')).toBe(true);
    expect(lines.at(-3)!.startsWith(id(n - 1) + ' ')).toBe(true);
    expect(lines.at(-1)).toBe('125,000 lobbies · times in UTC');
    expect(lines.filter((line) => line.length > 79)).toEqual([]);
  });
});
