// `lobby logs --follow` from the real executable, on a pseudo-terminal (script(1)) and piped, against an emulator
// that runs each lobby's server (readiness `run`): the server's printed lines come as it prints them, its exit ends
// the follow with the lobby's exit code shown (exit 0, whatever the server's; `--watch` then exits 1 for a failed one), and Ctrl-C ends it with 130 and no
// stack trace. The server waits for a file the test writes, so nothing here waits on a timer.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { isolatedEnv, plain, tempDir } from '../helpers/cli.js';
import { endpointEnv, startTestEmulator } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';
import { replicaEnv, serve, stopReplica, type Replica } from '../helpers/replica.js';

const POSIX = process.platform !== 'win32';

/** A child's output as it comes, and its exit code once it ends. */
function watchChild(child: ChildProcess): { out: () => string; err: () => string; code: Promise<number | null> } {
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = new Promise<number | null>((resolve) => child.once('close', (c) => resolve(c)));
  return { out: () => out, err: () => err, code };
}

describe.skipIf(!POSIX)('lobby logs --follow, the real executable against lobbies that run a server', () => {
  let emu: Awaited<ReturnType<typeof startTestEmulator>>;
  let env: Record<string, string | undefined>;
  let go: string;

  beforeAll(async () => {
    go = tempDir();
    // Waits for its start file, prints, then waits for its go file, whose content is its exit code.
    const server =
      `while [ ! -e "${go}/$RIVET_LOBBY_ID.start" ]; do sleep 0.02; done; echo "hello from $RIVET_LOBBY_ID"; printf '\\033[2J\\033]0;title\\007cleared\\n'; echo "to stderr" >&2; ` +
      `while [ ! -s "${go}/$RIVET_LOBBY_ID" ]; do sleep 0.02; done; echo bye; exit "$(cat "${go}/$RIVET_LOBBY_ID")"`;
    emu = await startTestEmulator({ run: server }, { logWatch: { waitMs: 300, pollMs: 20, minMs: 50 } });
    env = { PATH: process.env.PATH, ...isolatedEnv(), ...endpointEnv(emu) };
  });
  afterAll(() => emu?.close());

  // Made over HTTP, not by the CLI in this process: the lobby's server is a child of the emulator here. Its server
  // prints at once, or (started: false) once start(id) says so.
  async function newLobby({ started = true } = {}): Promise<string> {
    const res = await fetch(`${emu.endpoint}/matchmaker/lobbies/create`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${emu.tokens.public}` },
      body: JSON.stringify({ game_mode: 'default' }),
    });
    expect(res.status).toBe(200);
    const id = ((await res.json()) as { lobby: { lobby_id: string } }).lobby.lobby_id;
    if (started) start(id);
    return id;
  }
  const start = (lobbyId: string) => fs.writeFileSync(path.join(go, `${lobbyId}.start`), '');
  const finish = (lobbyId: string, exitCode: number) => fs.writeFileSync(path.join(go, lobbyId), String(exitCode));
  const follow = (lobbyId: string) => [BIN, 'lobby', 'logs', lobbyId, '--follow', '--interval', '0.1'];
  /** On a pseudo-terminal: script(1) gives the executable one, -e passes its exit code through. */
  const onTerminal = (args: string[]) =>
    spawn('script', ['-qec', [process.execPath, ...args, '--utc'].map((a) => `'${a}'`).join(' '), '/dev/null'], { env: env as NodeJS.ProcessEnv, stdio: ['pipe', 'pipe', 'pipe'] });
  const piped = (args: string[]) => spawn(process.execPath, args, { env: env as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });

  it('piped: the lines alone as the server prints them, sanitised; its exit 3 ends the follow with exit 0 and says so; --watch then exits 1 at once', async () => {
    // The follow starts before the server printed anything: its summary and its lines still have a blank line between.
    const id = await newLobby({ started: false });
    const child = watchChild(piped(follow(id)));
    await vi.waitFor(() => expect(child.out()).toContain(`lobby_id\t${id}\n`), { timeout: 10_000, interval: 20 });
    start(id);
    await vi.waitFor(() => expect(child.out()).toContain('to stderr'), { timeout: 10_000, interval: 20 });
    finish(id, 3);
    expect(await child.code).toBe(0);
    expect(child.err()).toBe(`lobby ${id} failed with exit code 3\n`);
    // The CI pattern the docs give: the follow, then --watch -q for whether it failed (stopped already: at once).
    const watched = watchChild(piped([BIN, 'lobby', 'logs', id, '-q', '--watch']));
    expect(await watched.code).toBe(1);
    // Nothing at all: -q prints the lines alone, and a watch shows none (it once printed the status row).
    expect([watched.out(), watched.err()]).toEqual(['', '']);
    const lines = child.out().split('\n\n')[1]!.split('\n');
    // stdout's lines in order; stderr's where its time puts it (the two streams printed in one millisecond may tie).
    expect(lines.filter((l) => l !== 'to stderr')).toEqual([`hello from ${id}`, 'cleared', 'bye', '']);
    expect(lines.filter((l) => l === 'to stderr')).toHaveLength(1);
    expect(child.out()).not.toMatch(/[\x00-\x08\x0b-\x1f\x7f]/);
  });

  it('piped: SIGINT ends the follow at once, exit 130, nothing on stderr', async () => {
    const id = await newLobby();
    const proc = piped(follow(id));
    const child = watchChild(proc);
    await vi.waitFor(() => expect(child.out()).toContain('to stderr'), { timeout: 10_000, interval: 20 });
    proc.kill('SIGINT');
    expect(await child.code).toBe(130);
    expect(child.err()).toBe('');
    finish(id, 0);
  });

  it('on a terminal: each line after its time; the server\'s exit 0 ends the follow with exit 0 and its exit code shown', async () => {
    // The follow starts before the server printed anything: its heading must not say "no lines" before the lines.
    const id = await newLobby({ started: false });
    const child = watchChild(onTerminal(follow(id)));
    await vi.waitFor(() => expect(plain(child.out())).toContain('following (Ctrl-C to stop)'), { timeout: 10_000, interval: 20 });
    start(id);
    await vi.waitFor(() => expect(child.out()).toContain('to stderr'), { timeout: 10_000, interval: 20 });
    finish(id, 0);
    expect(await child.code).toBe(0);
    const text = plain(child.out()).replace(/\r/g, '');
    expect(text).toMatch(/^Logs {2}stdout and stderr, following \(Ctrl-C to stop\)$/m);
    expect(text).not.toContain('no lines');
    expect(text).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} hello from ${id}$`, 'm'));
    expect(text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} cleared$/m);
    expect(text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} err to stderr$/m);
    expect(text).toMatch(/^\d\d:\d\d:\d\d\.\d{3} bye$/m);
    expect(text).toMatch(new RegExp(`^lobby ${id} stopped with exit code 0$`, 'm'));
    // The server's clear-screen and title sequences never reach the terminal.
    expect(child.out()).not.toMatch(/\x1b\[2J|\x1b\]0;/);
  });

  it('on a terminal, 20 times over with the server printing as the follow starts: never "no lines" before the lines', { timeout: 120_000 }, async () => {
    // Whether the follow's first read finds the server's lines or none is a race here, as it is for a user.
    const once = async () => {
      const id = await newLobby();
      const child = watchChild(onTerminal(follow(id)));
      await vi.waitFor(() => expect(child.out()).toContain('to stderr'), { timeout: 20_000, interval: 20 });
      finish(id, 0);
      expect(await child.code).toBe(0);
      const text = plain(child.out()).replace(/\r/g, '');
      expect(text).not.toContain('no lines');
      // The heading, then the server's lines, each after its time (stdout's and stderr's first lines may tie).
      expect(text).toMatch(/^Logs {2}stdout and stderr, following \(Ctrl-C to stop\)\n\d\d:\d\d:\d\d\.\d{3} /m);
      expect(text).toMatch(new RegExp(`^\\d\\d:\\d\\d:\\d\\d\\.\\d{3} hello from ${id}$`, 'm'));
    };
    // Four at a time: 20 runs in five rounds.
    for (let round = 0; round < 5; round++) await Promise.all([once(), once(), once(), once()]);
  });

  it('on a terminal: Ctrl-C ends the follow, exit 130, no error and no stack trace', async () => {
    const id = await newLobby();
    const proc = onTerminal(follow(id));
    const child = watchChild(proc);
    await vi.waitFor(() => expect(child.out()).toContain('to stderr'), { timeout: 10_000, interval: 20 });
    // The terminal turns ^C into SIGINT for the process in front.
    proc.stdin!.write('\x03');
    expect(await child.code).toBe(130);
    const text = plain(child.out());
    expect(text).not.toMatch(/error|unexpected|\n\s+at /);
    finish(id, 0);
  });
});

describe.skipIf(!POSIX)('lobby logs --follow when the emulator serving it stops', () => {
  let r: Replica | undefined;
  afterAll(() => stopReplica(r));

  it('prints the last lines its server wrote as serve stopped it, then one line saying the emulator stopped: exit 6', { timeout: 60_000 }, async () => {
    // The server says bye when serve's stop sends it SIGTERM: the last line the follow must still print.
    const dataDir = tempDir();
    r = await serve(['--run', 'trap "echo bye; exit 0" TERM; echo hello; while :; do sleep 0.05; done', '--data-dir', dataDir]);
    const env = { PATH: process.env.PATH, ...replicaEnv(tempDir(), r) };
    const created = spawn(process.execPath, [BIN, 'lobby', 'create', '--game-mode', 'default', '-q'], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    const made = watchChild(created);
    expect(await made.code, made.err()).toBe(0);
    const id = made.out().trim();
    // Serve records the lobby stopped (its server's exit) a moment before it stops answering: a follow that looked at
    // the status in that moment would rightly end with the lobby's stop, exit 0. Its status is looked at once an hour
    // here, so only the line watches meet serve's stop, and the follow must say the emulator stopped.
    const child = watchChild(spawn(process.execPath, [BIN, 'lobby', 'logs', id, '-q', '--follow', '--interval', '3600'], { env, stdio: ['ignore', 'pipe', 'pipe'] }));
    await vi.waitFor(() => expect(child.out()).toContain('hello'), { timeout: 20_000, interval: 20 });
    const endpoint = new URL(r.info.endpoint).host;
    await stopReplica(r);
    expect(await child.code).toBe(6);
    // Every line the store kept of the lobby, read once serve is gone, was printed (stdout's and stderr's, whose
    // order between them may tie): "bye" among them.
    const kept = watchChild(
      spawn(process.execPath, [BIN, 'lobby', 'logs', id, '-q'], { env: { ...env, GAMEHOST_ENDPOINT: 'embedded', GAMEHOST_EMULATOR_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] }),
    );
    expect(await kept.code, kept.err()).toBe(0);
    const lines = (text: string) => text.split('\n').filter(Boolean).sort();
    expect(lines(kept.out())).toContain('bye');
    expect(lines(child.out())).toEqual(lines(kept.out()));
    expect(child.err()).toBe(
      `error: the emulator at ${endpoint} stopped answering during the follow: connection refused (ECONNREFUSED); its serve has stopped\n` +
        '  the lines above are all it sent; follow again once `gamehost emulator serve` runs again\n',
    );
  });
});
