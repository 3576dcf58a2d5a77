// The --watch loops against a running emulator: the test changes the world mid-watch (stops the lobby, adds
// players) and checks what a terminal, a pipe and a JSON reader saw, and the exit code.
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { InterruptedError } from '../../src/errors.js';
import { Capture, FAST_RETRY, plain } from '../helpers/cli.js';
import { admit, stopLobby, useEmulator } from '../helpers/emulator.js';

/** Starts the CLI and hands back its live output, so a test can act once something has been shown. */
function start(args: string[], env: Record<string, string | undefined>, opts: { tty?: boolean; columns?: number } = {}) {
  const stdout = new Capture(opts.tty ?? false, opts.columns ?? 100);
  const stderr = new Capture(opts.tty ?? false, opts.columns ?? 100);
  const controller = new AbortController();
  const done = main(['node', 'gamehost', ...args], {
    io: { stdout, stderr },
    env,
    retry: FAST_RETRY,
    signal: controller.signal,
  });
  return {
    stdout,
    stderr,
    done,
    interrupt: () => controller.abort(new InterruptedError('SIGINT')),
    /** Waits until the stream (stdout unless told) shows `pattern`. */
    async until(pattern: RegExp, stream: Capture = stdout, timeoutMs = 10_000): Promise<void> {
      const deadline = Date.now() + timeoutMs;
      while (!pattern.test(plain(stream.text))) {
        if (Date.now() > deadline) throw new Error(`timed out waiting for ${pattern}; so far:\n${stream.text}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
  };
}

describe('lobby logs --watch', () => {
  const fx = useEmulator();

  async function newLobby(mode = 'default'): Promise<string> {
    const run = start(['lobby', 'create', '--game-mode', mode, '--json'], fx.env);
    expect(await run.done).toBe(0);
    return JSON.parse(run.stdout.text).lobby.lobby_id;
  }

  it('piped: a line per change until the lobby stops cleanly, then exit 0', async () => {
    const id = await newLobby();
    const watch = start(['lobby', 'logs', id, '--watch', '--interval', '0.1', '--verbose'], fx.env);
    await watch.until(/\trunning\t/);
    // Four polls (--verbose shows each request) with nothing new: still one line.
    await watch.until(/(^> GET .*\n[^]*){4}/m, watch.stderr);
    expect(watch.stdout.text.trim().split('\n')).toHaveLength(1);
    await stopLobby(fx.emu.endpoint, id, { exit_code: 0 });
    expect(await watch.done).toBe(0);

    const lines = watch.stdout.text.trim().split('\n').map((l) => l.split('\t'));
    // No server runs it here: no CPU or memory to show ('-'), none made up.
    expect(lines[0]).toEqual([expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/), 'running', 'ready', '-', '-', '-']);
    expect(lines.at(-1)!.slice(1)).toEqual(['stopped', 'stopped', '0', '-', '-']);
    expect(watch.stderr.text).toContain(`lobby ${id} stopped with exit code 0`);
  });

  it('piped: a failed lobby ends the watch with exit 1 and shows its exit code', async () => {
    const id = await newLobby();
    const watch = start(['lobby', 'logs', id, '--watch', '--interval', '0.1'], fx.env);
    await watch.until(/\trunning\t/);
    await stopLobby(fx.emu.endpoint, id, { exit_code: 137, failed: true });
    expect(await watch.done).toBe(1);
    expect(watch.stdout.text.trim().split('\n').at(-1)!.split('\t').slice(1)).toEqual(['failed', 'stopped', '137', '-', '-']);
    expect(watch.stderr.text).toContain('failed with exit code 137');
  });

  it('--json: one JSON body per line, per change', async () => {
    const id = await newLobby();
    const watch = start(['lobby', 'logs', id, '--watch', '--interval', '0.1', '--json'], fx.env);
    await watch.until(/"running":\{\}/);
    await stopLobby(fx.emu.endpoint, id, { exit_code: 3, failed: true });
    expect(await watch.done).toBe(1);
    const bodies = watch.stdout.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(bodies[0].lobby.lobby_id).toBe(id);
    expect(bodies[0].lobby.status).toHaveProperty('running');
    expect(bodies.at(-1).lobby.status.stopped).toMatchObject({ failed: true, exit_code: 3 });
    // A line only when the body changed.
    expect(new Set(watch.stdout.text.trim().split('\n')).size).toBe(bodies.length);
  });

  it('in a terminal: redraws in place with the cursor hidden, ends on the stopped lobby and gives the cursor back', async () => {
    const id = await newLobby();
    const watch = start(['lobby', 'logs', id, '--watch', '--interval', '0.1'], { ...fx.env, NO_COLOR: '1' }, { tty: true, columns: 80 });
    await watch.until(/Every 0\.1 s · updated \d{2}:\d{2}:\d{2} · Ctrl-C to stop/);
    await watch.until(/\x1b\[\d+A/);
    await stopLobby(fx.emu.endpoint, id, { exit_code: 0 });
    expect(await watch.done).toBe(0);

    const text = watch.stdout.text;
    expect(text.startsWith('\x1b[?25l')).toBe(true);
    expect(text.endsWith('\x1b[?25h')).toBe(true);
    // The last frame, after the last cursor-up: the stopped lobby, its timeline, no footer.
    const frames = text.split(/\r\x1b\[\d+A/);
    expect(frames.length).toBeGreaterThan(1);
    const last = frames.at(-1)!.replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '');
    expect(last).toContain(`Lobby ${id}  ■ stopped (exit code 0)`);
    expect(last).toMatch(/stopped\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} [+-]\d{2}:\d{2}\s+\+/);
    expect(last).not.toContain('Ctrl-C to stop');
    // Every line of every frame fits the terminal, so the cursor-up count is right.
    for (const line of plain(text).replace(/\x1b\[[0-9;?]*[A-Za-z]/g, '').split(/\r?\n|\r/)) expect([...line].length).toBeLessThanOrEqual(79);
  });

  it('in a terminal: the region by name, asked of the service once for the whole watch', async () => {
    const id = await newLobby();
    const watch = start(['lobby', 'logs', id, '--watch', '--interval', '0.1', '--verbose'], { ...fx.env, NO_COLOR: '1' }, { tty: true, columns: 80 });
    // Five polls of the logs.
    await watch.until(/(^> GET \S+\/logs\/lobbies\/[^]*){5}/m, watch.stderr);
    await stopLobby(fx.emu.endpoint, id, { exit_code: 0 });
    expect(await watch.done).toBe(0);
    expect(plain(watch.stdout.text)).toContain('Region     Atlanta (lnd-atl)');
    const lookups = watch.stderr.text.split('\n').filter((l) => /^> GET \S+\/cloud\/games\/[0-9a-f-]+$/.test(l));
    expect(lookups).toHaveLength(1);
  });

  it('Ctrl-C ends the watch at once, exit 130, cursor restored, and no error: stopping is what was asked', async () => {
    const id = await newLobby();
    // An hour between polls: the watch ends only if Ctrl-C cuts the wait short (else the test times out).
    const watch = start(['lobby', 'logs', id, '--watch', '--interval', '3600'], fx.env, { tty: true });
    await watch.until(/● running/);
    watch.interrupt();
    expect(await watch.done).toBe(130);
    expect(watch.stdout.text.endsWith('\x1b[?25h')).toBe(true);
    expect(watch.stderr.text).toBe('');
  });

  it('a lobby that already stopped: one answer and its exit code', async () => {
    const id = await newLobby();
    await stopLobby(fx.emu.endpoint, id, { exit_code: 1, failed: true });
    const watch = start(['lobby', 'logs', id, '--watch'], fx.env);
    expect(await watch.done).toBe(1);
    expect(watch.stdout.text.trim().split('\n')).toHaveLength(1);
  });
});

describe('stats --watch', () => {
  const fx = useEmulator();

  /** A lobby whose server has admitted its creator's player: one more connected player in the statistics. */
  async function newLobby(mode: string, region: string): Promise<string> {
    const run = start(['lobby', 'create', '--game-mode', mode, '--region', region, '--json'], fx.env);
    expect(await run.done).toBe(0);
    await admit(fx.emu.endpoint, JSON.parse(run.stdout.text));
    return JSON.parse(run.stdout.text).lobby.lobby_id;
  }

  it('piped: every row first, then a line for each row that changed, until Ctrl-C', async () => {
    const first = await newLobby('duos', 'lnd-fra');
    const watch = start(['stats', '--watch', '0.1'], fx.env);
    await watch.until(/\tduos\tlnd-fra\t1\t\+1\n/);
    await newLobby('duos', 'lnd-fra');
    await watch.until(/\tduos\tlnd-fra\t2\t\+1\n/);
    await stopLobby(fx.emu.endpoint, first);
    await watch.until(/\tduos\tlnd-fra\t1\t-1\n/);
    watch.interrupt();
    expect(await watch.done).toBe(130);
    const rows = watch.stdout.text.trim().split('\n').map((l) => l.split('\t').slice(1));
    expect(rows).toContainEqual(['squads', 'lnd-sgp', '0', '+0']);
    expect(rows.slice(-2)).toEqual([
      ['duos', 'lnd-fra', '2', '+1'],
      ['duos', 'lnd-fra', '1', '-1'],
    ]);
  });

  it('in a terminal: refreshes in place and shows the change since the last refresh', async () => {
    const watch = start(['stats', '--watch', '0.1', '--utc'], { ...fx.env, NO_COLOR: '1' }, { tty: true, columns: 80 });
    await watch.until(/Every 0\.1 s · updated \d{2}:\d{2}:\d{2} UTC/);
    await newLobby('squads', 'lnd-atl');
    await watch.until(/lnd-atl\s+1\s+█+\s+100%\s+\+1/);
    watch.interrupt();
    expect(await watch.done).toBe(130);
    expect(plain(watch.stdout.text)).toMatch(/^squads {2}1 player \(\d+% of all\) {2}\+1\x1b\[K$/m);
    expect(watch.stdout.text.endsWith('\x1b[?25h')).toBe(true);
  });

  it('in a terminal: a resize redraws at once, clearing the screen rather than leaving a stale copy', async () => {
    // A long interval: the redraw cannot come from a poll.
    const watch = start(['stats', '--watch', '60', '--utc'], { ...fx.env, NO_COLOR: '1' }, { tty: true, columns: 100 });
    await watch.until(/Ctrl-C to stop/);
    const before = watch.stdout.text.length;
    watch.stdout.columns = 40;
    watch.stdout.emit('resize');
    const redrawn = watch.stdout.text.slice(before);
    watch.interrupt();
    expect(await watch.done).toBe(130);
    expect(redrawn.startsWith('\x1b[H\x1b[2J')).toBe(true);
    for (const line of plain(redrawn).replace('\x1b[H\x1b[2J', '').split('\x1b[K\n').slice(0, -1)) expect([...line].length).toBeLessThanOrEqual(39);
  });

  it('--json: the body again, one line each time it changed', async () => {
    const watch = start(['stats', '--watch', '0.1', '--json'], fx.env);
    await watch.until(/\n/);
    await newLobby('default', 'lnd-sgp');
    await watch.until(/\n.*\n/);
    watch.interrupt();
    await watch.done;
    const bodies = watch.stdout.text.trim().split('\n').map((l) => JSON.parse(l));
    expect(bodies.at(-1).player_count).toBe(bodies[0].player_count + 1);
  });
});
