// `lobby logs` prints the lobby's log lines after its summary, follows them until the lobby stops (--follow), and
// saves a whole stream (--export): against the emulator over loopback, its lines appended as a lobby's server's
// output is (the logs service's append), with short log watches so a follow takes a fraction of a second.
import fs from 'node:fs';
import path from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { InterruptedError } from '../../src/errors.js';
import { runCli, tempDir, type RunOptions } from '../helpers/cli.js';
import { frontOf, useEmulator } from '../helpers/emulator.js';

const FAST_WATCH = { waitMs: 300, pollMs: 20, minMs: 50 };
const CLOCK = /^\d\d:\d\d:\d\d\.\d{3} /;

describe('lobby logs: the lines', () => {
  const fx = useEmulator({}, { logWatch: FAST_WATCH });
  const cli = (args: string[], opts: RunOptions = {}) => runCli(['lobby', 'logs', ...args], { env: fx.env, ...opts });
  async function newLobby(): Promise<string> {
    const r = await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env: fx.env });
    expect(r.code, r.stderr).toBe(0);
    return r.stdout.trim();
  }
  const append = (lobbyId: string, stream: 'std_out' | 'std_err', lines: string[]) => fx.emu.services.logs.append(lobbyId, stream, lines.map((l) => Buffer.from(l)));

  /** Until the clock reads a later millisecond: the emulator orders each stream's lines within one, not the two streams. */
  const tick = async () => {
    const now = Date.now();
    await vi.waitFor(() => expect(Date.now()).toBeGreaterThan(now), { interval: 1 });
  };

  /** A lobby whose server printed a line on stdout, one on stderr, then one more on stdout. */
  async function lobbyWithLines(): Promise<string> {
    const id = await newLobby();
    await append(id, 'std_out', ['first']);
    await tick();
    await append(id, 'std_err', ['\x1b[31mred\x1b[0m \x07bell']);
    await tick();
    await append(id, 'std_out', ['tab\there']);
    return id;
  }

  it('in a terminal: the summary, then each line after its time, stderr\'s marked, control sequences removed', async () => {
    const id = await lobbyWithLines();
    const r = await cli([id, '--utc'], { env: { ...fx.env, NO_COLOR: '1' }, tty: true });
    expect([r.code, r.stderr]).toEqual([0, '']);
    const [summary, logs] = r.stdout.split('\nLogs  ');
    expect(summary).toContain(`Lobby ${id}  ● running`);
    const lines = logs!.split('\n');
    expect(lines[0]).toBe('stdout and stderr');
    expect(lines.slice(1, 4).map((l) => l.replace(CLOCK, ''))).toEqual(['first', 'err red bell', 'tab\there']);
    for (const l of lines.slice(1, 4)) expect(l).toMatch(CLOCK);
    expect(r.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it('piped: the summary, an empty line, the lines alone in time order; --timestamps puts each after its time', async () => {
    const id = await lobbyWithLines();
    const r = await cli([id]);
    expect(r.code).toBe(0);
    const [summary, lines] = r.stdout.split('\n\n');
    expect(summary).toMatch(/^lobby_id\t.*\nstatus\trunning\n/);
    expect(lines).toBe('first\nred bell\ntab\there\n');
    const stamped = await cli([id, '--timestamps', '--stream', 'stdout']);
    expect(stamped.stdout.split('\n\n')[1]).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z\tfirst\n\d{4}-\S+Z\ttab\there\n$/);
  });

  it('-q: the lines alone; --stream, -n and --since choose which', async () => {
    const id = await lobbyWithLines();
    const lines = async (...args: string[]) => {
      const r = await cli([id, '-q', ...args]);
      expect([r.code, r.stderr]).toEqual([0, '']);
      return r.stdout;
    };
    expect(await lines()).toBe('first\nred bell\ntab\there\n');
    expect(await lines('--stream', 'stderr')).toBe('red bell\n');
    expect(await lines('-n', '2')).toBe('red bell\ntab\there\n');
    expect(await lines('--lines', '0')).toBe('');
    expect(await lines('--since', '1h')).toBe('first\nred bell\ntab\there\n');
    expect(await lines('--since', new Date(Date.now() + 60_000).toISOString())).toBe('');
    expect(await lines('--since', String(Date.now() - 3_600_000), '--stream', 'stdout', '-n', '1')).toBe('tab\there\n');
  });

  it('-n 0: the summary alone, and no request for lines', async () => {
    const id = await lobbyWithLines();
    const r = await cli([id, '-n', '0', '--verbose']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/^status\trunning$/m);
    expect(r.stdout).not.toContain('first');
    expect(r.stderr).not.toMatch(/\/logs\?stream=/);
  });

  it('--json: the service\'s summary as received, with the lines read as log_lines', async () => {
    const id = await lobbyWithLines();
    const r = await cli([id, '--json']);
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.lobby.lobby_id).toBe(id);
    expect(body.lobby.status).toHaveProperty('running');
    expect(body.log_lines.map((l: { stream: string; line: string }) => [l.stream, l.line])).toEqual([
      ['std_out', 'first'],
      ['std_err', '\x1b[31mred\x1b[0m \x07bell'],
      ['std_out', 'tab\there'],
    ]);
    for (const l of body.log_lines) expect(l.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{9}Z$/);
    // JSON escapes the control characters: the document is safe on a terminal.
    expect(r.stdout).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it("--follow prints new lines as they come; the lobby stopping ends it: exit 0 with its exit code, a failed one's too", async () => {
    for (const [stop, code, said] of [
      [{ exitCode: 0 }, 0, 'stopped with exit code 0'],
      [{ exitCode: 137, failed: true }, 0, 'failed with exit code 137'],
    ] as const) {
      const id = await lobbyWithLines();
      let shown = '';
      const run = cli([id, '-q', '--follow', '--interval', '0.1'], { onStdout: (text) => (shown = text) });
      // The recent lines first; what comes after them, through the watch.
      await vi.waitFor(() => expect(shown).toContain('tab\there'));
      await append(id, 'std_out', ['second']);
      await tick();
      await append(id, 'std_err', ['oops']);
      await fx.emu.services.lobbies.stop(id, stop);
      const r = await run;
      expect(r.code).toBe(code);
      // The recent lines in time order; each stream's new lines in order, the two streams as their watches answer.
      expect(r.stdout).toMatch(/^first\nred bell\ntab\there\n(second\noops|oops\nsecond)\n$/);
      // -q: no message; without it, the stop is said on stderr.
      expect(r.stderr).toBe('');
      const again = await cli([id, '--follow', '-n', '0']);
      expect([again.code, again.stderr]).toEqual([code, `lobby ${id} ${said}\n`]);
    }
  });

  it('--follow --json: the summary, a JSON line per log line, then the summary that says it stopped', async () => {
    const id = await newLobby();
    await append(id, 'std_out', ['before']);
    const lines: string[] = [];
    const run = cli([id, '--follow', '--json', '--interval', '0.1'], { onStdout: (text) => lines.splice(0, lines.length, ...text.split('\n')) });
    await vi.waitFor(() => expect(lines.some((l) => l.includes('"before"'))).toBe(true));
    await append(id, 'std_err', ['after']);
    await vi.waitFor(() => expect(lines.some((l) => l.includes('"after"'))).toBe(true));
    await fx.emu.services.lobbies.stop(id, { exitCode: 0 });
    const r = await run;
    expect(r.code).toBe(0);
    const docs = r.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(docs[0].lobby.status).toHaveProperty('running');
    expect(docs.slice(1, -1).map((d) => [d.stream, d.line])).toEqual([
      ['std_out', 'before'],
      ['std_err', 'after'],
    ]);
    expect(docs.at(-1).lobby.status.stopped.exit_code).toBe(0);
  });

  it('Ctrl-C ends a follow at once: exit 130, nothing on stderr', async () => {
    const id = await lobbyWithLines();
    const controller = new AbortController();
    const r = await cli([id, '--follow'], {
      signal: controller.signal,
      onStdout: (text) => text.includes('tab\there') && controller.abort(new InterruptedError('SIGINT')),
    });
    expect([r.code, r.stderr]).toEqual([130, '']);
  });

  it('--export saves the whole stream as served, beside the summary of what it wrote; - writes it on stdout', async () => {
    const id = await newLobby();
    const many = Array.from({ length: 300 }, (_, i) => `line ${i}`);
    await append(id, 'std_out', many);
    await append(id, 'std_err', ['\x1b[31mraw\x1b[0m']);
    const dir = tempDir();
    const r = await cli([id, '--export'], { cwd: dir });
    expect([r.code, r.stderr]).toEqual([0, `Wrote 300 lines of stdout (2.53 KiB) to lobby-${id}-stdout.txt\n`]);
    // Every line, not the 256 the lines route answers.
    expect(fs.readFileSync(path.join(dir, `lobby-${id}-stdout.txt`), 'utf8')).toBe(many.join('\n') + '\n');
    const err = await cli([id, '--export', '-', '--stream', 'stderr']);
    expect([err.code, err.stdout]).toEqual([0, '\x1b[31mraw\x1b[0m\n']);
    const quiet = await cli([id, '--export', 'out/err.txt', '--stream', 'stderr', '-q'], { cwd: dir });
    expect(quiet.code, quiet.stderr).toBe(2);
    expect(quiet.stderr).toMatch(/^error: --export: cannot write .*out\/err\.txt: no such file/);
    expect(fs.readdirSync(dir)).toEqual([`lobby-${id}-stdout.txt`]);
    const json = await cli([id, '--export', 'e.txt', '--json'], { cwd: dir });
    expect(JSON.parse(json.stdout)).toMatchObject({ lobby_id: id, stream: 'std_out', output: path.join(dir, 'e.txt'), lines: 300, bytes: fs.statSync(path.join(dir, 'e.txt')).size });
  });

  it('--export into a device is written straight into; a download cut short leaves no file and exits 6', async () => {
    const id = await newLobby();
    await append(id, 'std_out', Array.from({ length: 100 }, (_, i) => `line ${i}`));
    expect((await cli([id, '--export', '/dev/null'])).code).toBe(0);
    // A front that answers the presigned GET with half its body, then hangs up (the emulator never does).
    const front = await frontOf(fx.emu.endpoint, (req, res) => {
      if (!req.url?.startsWith('/_export/')) return false;
      res.writeHead(200, { 'content-type': 'text/plain', 'content-length': '1000' });
      res.write('line 0\nline 1\n', () => res.destroy());
      return true;
    });
    try {
      const dir = tempDir();
      const r = await cli([id, '--export', 'cut.txt'], { cwd: dir, env: { ...fx.env, GAMEHOST_ENDPOINT: front.endpoint } });
      expect(r.code).toBe(6);
      expect(r.stderr.split('\n')[0]).toMatch(/^error: /);
      expect(fs.readdirSync(dir)).toEqual([]);
    } finally {
      front.close();
    }
  });

  it('--export of an unknown lobby: one line, exit 4, no file', async () => {
    const dir = tempDir();
    const r = await cli(['00000000-0000-4000-8000-000000000000', '--export', 'x.txt'], { cwd: dir });
    expect(r.code).toBe(4);
    expect(r.stderr.split('\n')[0]).toMatch(/^error: .*not found/i);
    expect(fs.readdirSync(dir)).toEqual([]);
  });

  it.each([
    [['--watch', '--follow'], '--watch redraws the status and --follow prints the lines: give one of them'],
    [['--interval', '1'], '--interval goes with --watch or --follow'],
    [['--export', '--follow'], '--export saves the whole stream: drop --follow'],
    [['--export', 'f.txt', '-n', '3'], '--export saves the whole stream: drop --lines'],
    [['--export', '--stream', 'all'], '--export saves one stream: --stream stdout or --stream stderr'],
    [['--since', 'yesterday'], '--since must be a duration such as 10m or 2h, or a time (RFC 3339 such as 2026-11-20T10:00:00Z, or epoch ms), not "yesterday"'],
    [['--lines', '-1'], '--lines must be at least 0, not -1'],
    [['--timestamps', '--json'], "--json already carries each line's timestamp: drop --timestamps"],
    [['--stream', 'both'], null],
  ])('refuses %j before any request, exit 2', async (args, message) => {
    const r = await cli(['2f1c0a4e-1b2c-4d3e-8f90-a1b2c3d4e5f6', ...args, '--endpoint', 'http://127.0.0.1:9']);
    expect(r.code).toBe(2);
    if (message) expect(r.stderr.split('\n')[0]).toBe(`error: ${message}`);
    expect(r.stderr).not.toMatch(/ECONNREFUSED|connection refused/);
  });
});

describe('lobby logs of a lobby whose server has not started', () => {
  const fx = useEmulator({ startDelayMs: 3_600_000 }, { logWatch: FAST_WATCH });

  it('no lines yet; --export is the service\'s MATCHMAKER_LOBBY_NOT_STARTED in one line, exit 1, no file', async () => {
    const id = (await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env: fx.env })).stdout.trim();
    const r = await runCli(['lobby', 'logs', id, '--stream', 'stderr'], { env: { ...fx.env, NO_COLOR: '1' }, tty: true });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/\nLogs  stderr: no lines\n$/);
    const dir = tempDir();
    const exported = await runCli(['lobby', 'logs', id, '--export', 'x.txt'], { env: fx.env, cwd: dir });
    expect(exported.code).toBe(1);
    expect(exported.stderr.split('\n')[0]).toMatch(/^error: .*\(MATCHMAKER_LOBBY_NOT_STARTED/);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
