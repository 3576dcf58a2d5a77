// The emulator's own commands, run in-process as a user would: lobby stop, builds, reset, and serve's options.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { ManualClock, NAMESPACE_ID, startEmulator } from '../../src/emulator/index.js';
import { isolatedEnv, plain, runCli, tempDir } from '../helpers/cli.js';
import { admit, endpointEnv, startTestEmulator } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

const UNKNOWN = '12345678-1234-4234-8234-123456789abc';

/** The embedded emulator's data directory under an isolatedEnv(). */
const dataDirOf = (env: Record<string, string | undefined>) => path.join(env.XDG_DATA_HOME!, 'gamehost', 'emulator');

async function newLobby(env: Record<string, string | undefined>, extra: string[] = []): Promise<string> {
  const r = await runCli(['lobby', 'create', '--game-mode', 'default', '--json', ...extra], { env });
  expect(r.code).toBe(0);
  return JSON.parse(r.stdout).lobby.lobby_id;
}

/** Piped `key<TAB>value` output as an object. */
const record = (stdout: string) => Object.fromEntries(stdout.trim().split('\n').map((l) => l.split('\t') as [string, string]));

describe('emulator lobby stop', () => {
  const env = isolatedEnv();

  it('stops a lobby of the embedded emulator; lobby logs then shows it stopped', async () => {
    const lobbyId = await newLobby(env);
    const r = await runCli(['emulator', 'lobby', 'stop', lobbyId, '--exit-code', '3'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toBe('');
    expect(record(r.stdout)).toMatchObject({ lobby_id: lobbyId, status: 'failed', exit_code: '3' });
    const logs = await runCli(['lobby', 'logs', lobbyId, '--json'], { env });
    expect(JSON.parse(logs.stdout).lobby.status).toEqual({
      running: null,
      stopped: { stop_ts: expect.any(String), failed: true, exit_code: 3 },
    });
  });

  it('--json prints the lobby summary; exit code 0 is a clean stop unless --failed', async () => {
    const clean = await runCli(['emulator', 'lobby', 'stop', await newLobby(env), '--json'], { env });
    expect(JSON.parse(clean.stdout).lobby.status.stopped).toMatchObject({ failed: false, exit_code: 0 });
    const failed = await runCli(['emulator', 'lobby', 'stop', await newLobby(env), '--failed', '--json'], { env });
    expect(JSON.parse(failed.stdout).lobby.status.stopped).toMatchObject({ failed: true, exit_code: 0 });
  });

  it('in a terminal shows the stopped badge and the timeline', async () => {
    const lobbyId = await newLobby(env);
    const r = await runCli(['emulator', 'lobby', 'stop', lobbyId], { env, tty: true });
    const out = plain(r.stdout);
    expect(out).toContain(`Lobby ${lobbyId}  ■ stopped (exit code 0)`);
    expect(out).toMatch(/Timeline\n {2}created .*\n {2}started .*\n {2}ready .*\n {2}stopped /);
  });

  it('stopping twice keeps the first stop', async () => {
    const lobbyId = await newLobby(env);
    await runCli(['emulator', 'lobby', 'stop', lobbyId, '--exit-code', '2'], { env });
    const again = await runCli(['emulator', 'lobby', 'stop', lobbyId, '--exit-code', '0', '--json'], { env });
    expect(JSON.parse(again.stdout).lobby.status.stopped.exit_code).toBe(2);
  });

  it('an unknown lobby → exit 4, one error line', async () => {
    const r = await runCli(['emulator', 'lobby', 'stop', UNKNOWN], { env });
    expect(r.code).toBe(4);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`error: Lobby ${UNKNOWN} not found in ${dataDirOf(env)}. (API_NOT_FOUND)\n`);
  });

  it('a data directory that does not exist is not created, and is said to hold no emulator data', async () => {
    const dir = path.join(tempDir(), 'nothing-here');
    const r = await runCli(['emulator', 'lobby', 'stop', UNKNOWN, '--data-dir', dir], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/^error: --data-dir: no emulator data in /);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it.each([
    [['not-a-uuid'], /the lobby id must be a UUID, not "not-a-uuid"/],
    [[UNKNOWN, '--exit-code', 'three'], /--exit-code must be a whole number, not "three"/],
    [[UNKNOWN, '--exit-code', '300'], /--exit-code must be from 0 to 255, not 300/],
    [[UNKNOWN, '--exit-code', '-1'], /--exit-code must be from 0 to 255, not -1/],
    [[UNKNOWN, '--data-dir', '/tmp/x', '--endpoint', 'http://127.0.0.1:1'], /--data-dir and --endpoint do not go together/],
  ])('refuses %j with exit 2', async (args, message) => {
    const r = await runCli(['emulator', 'lobby', 'stop', ...args], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  describe('beside a running emulator', () => {
    let emu: Awaited<ReturnType<typeof startTestEmulator>>;
    beforeAll(async () => {
      emu = await startTestEmulator();
    });
    afterAll(() => emu.close());

    const create = async () => {
      const res = await fetch(`${emu.endpoint}/matchmaker/lobbies/create`, { method: 'POST', body: '{"game_mode":"duos"}' });
      return ((await res.json()) as { lobby: { lobby_id: string } }).lobby.lobby_id;
    };
    const status = async (lobbyId: string) => {
      const logs = await runCli(['lobby', 'logs', lobbyId, '--json'], { env: { ...isolatedEnv(), ...endpointEnv(emu) } });
      return JSON.parse(logs.stdout).lobby.status;
    };

    it('--data-dir works on its store directly, while it serves', async () => {
      const lobbyId = await create();
      const r = await runCli(['emulator', 'lobby', 'stop', lobbyId, '--data-dir', emu.dataDir, '--exit-code', '1'], { env });
      expect(r.code).toBe(0);
      expect((await status(lobbyId)).stopped).toMatchObject({ exit_code: 1, failed: true });
    });

    it('--endpoint (or GAMEHOST_ENDPOINT) goes through its admin route', async () => {
      const lobbyId = await create();
      const r = await runCli(['emulator', 'lobby', 'stop', lobbyId, '--endpoint', emu.endpoint, '--exit-code', '137', '--json'], { env });
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).lobby.status.stopped).toMatchObject({ exit_code: 137, failed: true });
      expect((await status(lobbyId)).stopped.exit_code).toBe(137);

      const other = await create();
      const viaEnv = await runCli(['emulator', 'lobby', 'stop', other], { env: { ...env, GAMEHOST_ENDPOINT: emu.endpoint } });
      expect(viaEnv.code).toBe(0);
      expect((await status(other)).stopped.exit_code).toBe(0);
    });

    it('an unknown lobby through the endpoint → exit 4 with the service error and its ray id', async () => {
      const r = await runCli(['emulator', 'lobby', 'stop', UNKNOWN, '--endpoint', emu.endpoint], { env });
      expect(r.code).toBe(4);
      expect(r.stderr).toMatch(new RegExp(`^error: Lobby ${UNKNOWN} not found\\. \\(API_NOT_FOUND, ray [0-9a-f-]{36}\\)\\n`));
    });
  });
});

describe('emulator builds', () => {
  const env = isolatedEnv();
  const dir = tempDir();

  it('with nothing pushed: a note in a terminal, nothing when piped, an empty list as JSON; no data dir is made', async () => {
    const tty = await runCli(['emulator', 'builds'], { env, tty: true });
    expect(plain(tty.stdout)).toBe('No builds yet: push one with `gamehost build push`.\n');
    expect((await runCli(['emulator', 'builds'], { env })).stdout).toBe('');
    expect(JSON.parse((await runCli(['emulator', 'builds', '--json'], { env })).stdout)).toEqual({ builds: [] });
    expect(fs.existsSync(dataDirOf(env))).toBe(false);
  });

  it('lists pushed builds: tab-separated when piped, a table in a terminal, the full record as JSON', async () => {
    const file = path.join(dir, 'server.tar');
    fs.writeFileSync(file, Buffer.alloc(3000, 7));
    const pushed = await runCli(['build', 'push', file, '--tag', 'game-server:v1', '--name', 'Server 1', '--json'], { env });
    expect(pushed.code).toBe(0);
    const { build_id: buildId, sha256 } = JSON.parse(pushed.stdout);

    const piped = await runCli(['emulator', 'builds'], { env });
    expect(piped.code).toBe(0);
    const [row] = piped.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(row).toEqual([buildId, 'game-server:v1', 'Server 1', '3000', 'complete', expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/), sha256]);

    const tty = plain((await runCli(['emulator', 'builds'], { env, tty: true, columns: 200 })).stdout);
    expect(tty).toMatch(/BUILD\s+TAG\s+NAME\s+SIZE\s+STATE\s+CREATED\s+SHA-256/);
    expect(tty).toContain('2.93 KiB');
    expect(tty).toContain(sha256.slice(0, 12));
    expect(tty).not.toContain(sha256);

    const json = JSON.parse((await runCli(['emulator', 'builds', '--json'], { env })).stdout);
    expect(json.builds).toEqual([
      {
        build_id: buildId,
        image_tag: 'game-server:v1',
        display_name: 'Server 1',
        kind: 'docker_image',
        compression: 'none',
        content_length: 3000,
        sha256,
        complete: true,
        create_ts: expect.any(String),
      },
    ]);
  });

  it('--endpoint lists a running emulator, --data-dir any data directory', async () => {
    const emu = await startTestEmulator();
    try {
      const file = path.join(dir, 'other.tar');
      fs.writeFileSync(file, 'abc');
      const pushEnv = { ...isolatedEnv(), ...endpointEnv(emu) };
      expect((await runCli(['build', 'push', file, '--tag', 'other:v2'], { env: pushEnv })).code).toBe(0);
      const viaEndpoint = JSON.parse((await runCli(['emulator', 'builds', '--endpoint', emu.endpoint, '--json'], { env })).stdout);
      const viaDir = JSON.parse((await runCli(['emulator', 'builds', '--data-dir', emu.dataDir, '--json'], { env })).stdout);
      expect(viaEndpoint.builds.map((b: { image_tag: string }) => b.image_tag)).toEqual(['other:v2']);
      expect(viaDir).toEqual(viaEndpoint);
    } finally {
      await emu.close();
    }
  });
});

/** Runs the CLI with stdin as a terminal that types `typed`. */
async function runWithTerminal(args: string[], env: Record<string, string | undefined>, typed: string) {
  const stdin = Object.assign(new PassThrough(), { isTTY: true });
  let stdout = '';
  let stderr = '';
  const sink = (write: (s: string) => void) =>
    Object.assign(
      new Writable({
        write(chunk, _enc, cb) {
          write(chunk.toString());
          cb();
        },
      }),
      { isTTY: true, columns: 100 },
    );
  const out = sink((s) => (stdout += s));
  const err = sink((s) => {
    stderr += s;
    // Answer once the question is on screen, as a person would.
    if (s.includes('[y/N]')) stdin.end(typed);
  });
  const code = await main(['node', 'gamehost', ...args], { io: { stdin, stdout: out, stderr: err }, env, signal: new AbortController().signal });
  return { code, stdout, stderr: plain(stderr) };
}

/** The tokens an emulator on this data directory hands out (they follow from its secret). */
async function tokensOf(dataDir: string) {
  const emu = await startEmulator({ dataDir });
  await emu.close();
  return emu.tokens;
}

describe('emulator reset', () => {
  /** An embedded emulator's data with one player in game: created by `lobby create`, admitted by its server. */
  async function seeded() {
    const env = isolatedEnv();
    const created = await runCli(['lobby', 'create', '--game-mode', 'default', '--json'], { env });
    expect(created.code).toBe(0);
    // The embedded emulator's address dies with the command: the server reaches one serving the same data.
    const emu = await startEmulator({ dataDir: dataDirOf(env) });
    try {
      await admit(emu.endpoint, JSON.parse(created.stdout));
      return { env, dir: dataDirOf(env), tokens: emu.tokens };
    } finally {
      await emu.close();
    }
  }
  const players = async (env: Record<string, string | undefined>) =>
    JSON.parse((await runCli(['stats', '--json'], { env })).stdout).player_count as number;

  it('piped without --yes: exit 2, one line naming --yes, nothing deleted', async () => {
    const { env, dir } = await seeded();
    const r = await runCli(['emulator', 'reset'], { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: emulator reset deletes the emulator data: pass --yes to confirm (stdin is not a terminal)\n');
    expect(fs.existsSync(path.join(dir, 'emulator.db'))).toBe(true);
    expect(await players(env)).toBe(1);
  });

  it('--yes deletes lobbies, builds and the token secret; the next run starts afresh', async () => {
    const { env, dir, tokens } = await seeded();
    const r = await runCli(['emulator', 'reset', '--yes'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(`Deleted the emulator data in ${dir}; the next run starts afresh with new tokens.\n`);
    expect(fs.existsSync(dir)).toBe(false);
    expect(await players(env)).toBe(0);
    expect((await tokensOf(dir)).cloud).not.toBe(tokens.cloud);
  });

  it('--json names what was removed; files that are not the emulator\'s stay', async () => {
    const { env, dir } = await seeded();
    fs.writeFileSync(path.join(dir, 'notes.txt'), 'mine');
    const r = await runCli(['emulator', 'reset', '--yes', '--json'], { env });
    const out = JSON.parse(r.stdout);
    expect(out.data_dir).toBe(dir);
    expect(out.removed).toEqual(expect.arrayContaining(['emulator.db', 'secret', 'uploads', 'builds']));
    expect(fs.readdirSync(dir)).toEqual(['notes.txt']);
  });

  it('--data-dir resets another directory; an empty one is fine', async () => {
    const emu = await startTestEmulator();
    await emu.close();
    const r = await runCli(['emulator', 'reset', '--yes', '--data-dir', emu.dataDir], { env: isolatedEnv() });
    expect(r.code).toBe(0);
    expect(fs.existsSync(emu.dataDir)).toBe(false);
    const again = await runCli(['emulator', 'reset', '--yes', '--data-dir', emu.dataDir], { env: isolatedEnv() });
    expect(again.code).toBe(0);
    expect(again.stderr).toBe(`No emulator data in ${emu.dataDir}; nothing to delete.\n`);
  });

  it('in a terminal asks first: "y" deletes', async () => {
    const { env, dir } = await seeded();
    const r = await runWithTerminal(['emulator', 'reset'], env, 'y\n');
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`Delete every lobby, build, export and token of the emulator in ${dir}? [y/N] `);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('in a terminal asks first: anything else keeps everything', async () => {
    const { env, dir } = await seeded();
    for (const answer of ['n\n', '\n', '']) {
      const r = await runWithTerminal(['emulator', 'reset'], env, answer);
      // Not done: exit 1, as a script must tell (rm -i answered no).
      expect(r.code).toBe(1);
      expect(r.stderr).toContain('Nothing was deleted.');
      expect(fs.existsSync(path.join(dir, 'emulator.db'))).toBe(true);
    }
  });

  it('refuses while emulator serve holds the data, naming its pid and endpoint; after it stops, or once it is gone, resets', async () => {
    const env = isolatedEnv();
    const dir = path.join(tempDir(), 'data');
    const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', '--data-dir', dir], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    try {
      const info = JSON.parse(await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout! }).once('line', resolve)));
      const created = await fetch(`${info.endpoint}/matchmaker/lobbies/create`, { method: 'POST', body: '{"game_mode":"default"}' });
      expect(created.status).toBe(200);
      const refused = await runCli(['emulator', 'reset', '--yes', '--data-dir', dir], { env });
      expect([refused.code, refused.stdout]).toEqual([1, '']);
      expect(refused.stderr).toBe(
        `error: emulator serve (pid ${child.pid} at ${info.endpoint}) is using ${dir}; nothing was deleted\n` +
          `  stop it first (Ctrl-C where it runs, or kill ${child.pid}), then reset\n`,
      );
      expect(fs.existsSync(path.join(dir, 'emulator.db'))).toBe(true);
      // The server still serves the lobby it had.
      expect((await fetch(`${info.endpoint}/matchmaker/players/statistics`, { headers: { authorization: `Bearer ${info.tokens.public}` } })).status).toBe(200);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
    const reset = await runCli(['emulator', 'reset', '--yes', '--data-dir', dir], { env });
    expect([reset.code, reset.stderr]).toEqual([0, `Deleted the emulator data in ${dir}; the next run starts afresh with new tokens.\n`]);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('a record left by a server that was killed holds nothing', async () => {
    const { env, dir } = await seeded();
    const gone = spawn(process.execPath, ['-e', '0']);
    await new Promise((resolve) => gone.once('exit', resolve));
    fs.mkdirSync(path.join(dir, 'servers'));
    fs.writeFileSync(path.join(dir, 'servers', `${gone.pid}.json`), JSON.stringify({ pid: gone.pid, endpoint: 'http://127.0.0.1:6420' }));
    const r = await runCli(['emulator', 'reset', '--yes'], { env });
    expect(r.code).toBe(0);
    expect(fs.existsSync(dir)).toBe(false);
  });

  it('--no-input forbids the prompt even in a terminal', async () => {
    const { env } = await seeded();
    const r = await runWithTerminal(['emulator', 'reset', '--no-input'], env, 'y\n');
    expect(r.code).toBe(2);
    expect(r.stderr).toBe('error: emulator reset deletes the emulator data: pass --yes to confirm (--no-input forbids the prompt)\n');
  });
});

describe('emulator configuration', () => {
  it('serve --part-size cuts uploads in parts of that size, over the config file', async () => {
    const dir = tempDir();
    const config = path.join(dir, 'emulator.json');
    fs.writeFileSync(config, JSON.stringify({ partSize: 2 * 1024 * 1024 }));
    const child = spawn(
      process.execPath,
      [BIN, 'emulator', 'serve', '--port', '0', '--json', '--data-dir', path.join(dir, 'data'), '--config', config, '--part-size', '1MiB'],
      { env: { PATH: process.env.PATH, ...isolatedEnv() }, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // Waited for after the stop: the serve writes its data directory until it exits, and the file removes it.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const line = await new Promise<string>((resolve) => readline.createInterface({ input: child.stdout! }).once('line', resolve));
      const info = JSON.parse(line);
      const res = await fetch(`${info.endpoint}/cloud/games/${info.game_id}/builds`, {
        method: 'POST',
        headers: { authorization: `Bearer ${info.tokens.cloud}` },
        body: JSON.stringify({ display_name: 'x', image_tag: 'x:y', image_file: { path: 'x.tar', content_length: 5 * 1024 * 1024 + 1 } }),
      });
      const body = (await res.json()) as { image_presigned_requests: { content_length: number }[] };
      expect(body.image_presigned_requests.map((r) => r.content_length)).toEqual([...Array(5).fill(1024 * 1024), 1]);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  it('serve with a GAMEHOST_EMULATOR_SECRET under 32 bytes → exit 2, before anything is opened', async () => {
    const dir = tempDir();
    const r = await runCli(['emulator', 'serve', '--port', '0', '--data-dir', path.join(dir, 'data')], {
      env: isolatedEnv({ GAMEHOST_EMULATOR_SECRET: 'short' }),
    });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      'error: GAMEHOST_EMULATOR_SECRET: the emulator secret must be at least 32 bytes; this one has 5\n  e.g. the output of `openssl rand -hex 32`\n',
    );
    expect(fs.existsSync(path.join(dir, 'data'))).toBe(false);
  });

  it.each([['0'], ['0.5'], ['big'], ['-1'], ['2 MiBs']])('serve --part-size %s → exit 2', async (size) => {
    const r = await runCli(['emulator', 'serve', '--port', '0', '--part-size', size], { env: isolatedEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: --part-size must be a size in bytes such as 65536, 64K, 64KiB or 1M, not "${size}"\n`);
  });

  it('serve: a game mode with its own command and the others without one is a usage error, unless --run covers them', async () => {
    const dir = tempDir();
    const config = path.join(dir, 'emulator.json');
    fs.writeFileSync(config, JSON.stringify({ gameModes: ['default', 'duos'], gameModeSettings: { duos: { run: 'node duos.js' } } }));
    const r = await runCli(['emulator', 'serve', '--port', '0', '--data-dir', path.join(dir, 'data'), '--config', config], { env: isolatedEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(`error: emulator config ${config}: readiness run needs run, or a run in gameModeSettings for every game mode (none for default)\n`);
    expect(fs.existsSync(path.join(dir, 'data'))).toBe(false);
    // With --run for the others the config passes (the next check, the admin token off loopback, is what refuses).
    const covered = await runCli(['emulator', 'serve', '--host', '0.0.0.0', '--data-dir', path.join(dir, 'data'), '--config', config, '--run', 'node server.js'], { env: isolatedEnv() });
    expect(covered.code).toBe(2);
    expect(covered.stderr).toMatch(/^error: emulator serve on 0\.0\.0\.0 needs an admin token/);
  });

  it.each([['a b'], ['-lead'], ['x'.repeat(64)]])('serve --replica %s → exit 2, one line naming the flag', async (name) => {
    const r = await runCli(['emulator', 'serve', '--port', '0', '--run', 'true', '--replica', name], { env: isolatedEnv() });
    expect(r.code).toBe(2);
    expect(r.stderr).toBe(
      `error: --replica "${name}" must be 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit\n  e.g. --replica staging-1\n`,
    );
  });

  it.each([
    [['--run', 'node server.js', '--run-build'], "error: option '--run-build [tag]' cannot be used with option '--run <command>'\nrun `gamehost emulator serve --help` for usage\n"],
    [['--run-build', 'Game:v1'], 'error: --run-build must be name:tag, each side lowercase [0-9a-z_-] not starting or ending with "-", not "Game:v1"\n  e.g. --run-build game-server:v1-4-2\n'],
    [['--run-build', '--readiness', 'manual'], 'error: --run-build goes with --readiness run, not manual\n'],
  ])('serve %j → exit 2, one line', async (args, stderr) => {
    const r = await runCli(['emulator', 'serve', '--port', '0', ...args], { env: isolatedEnv() });
    expect(r.stderr).toBe(stderr);
    expect(r.code).toBe(2);
  });

  it.each([['--run-build'], ['"runBuild": true in --config']])('serve with %s where no Docker daemon answers → exit 5 in one line, before anything is opened', async (how) => {
    const dir = tempDir();
    const config = path.join(dir, 'emulator.json');
    fs.writeFileSync(config, JSON.stringify({ runBuild: true }));
    const args = how === '--run-build' ? ['--run-build'] : ['--config', config];
    const r = await runCli(['emulator', 'serve', '--port', '0', ...args, '--data-dir', path.join(dir, 'data')], {
      env: isolatedEnv({ DOCKER_HOST: `unix://${path.join(dir, 'docker.sock')}` }),
    });
    expect(r.stderr).toBe(`error: --run-build: no Docker daemon answers at unix://${path.join(dir, 'docker.sock')} (ENOENT): start one, or set DOCKER_HOST\n`);
    expect(r.code).toBe(5);
    expect(fs.existsSync(path.join(dir, 'data'))).toBe(false);
  });

  it('runBuild in GAMEHOST_EMULATOR_CONFIG without Docker: the embedded emulator refuses in one line, exit 1', async () => {
    const socket = path.join(tempDir(), 'docker.sock');
    const r = await runCli(['stats'], { env: isolatedEnv({ DOCKER_HOST: `unix://${socket}` }, { runBuild: true }) });
    expect(r.stderr).toBe(
      `error: the embedded emulator's runBuild: no Docker daemon answers at unix://${socket} (ENOENT): start one, or set DOCKER_HOST\n  start Docker, or take runBuild out of GAMEHOST_EMULATOR_CONFIG\n`,
    );
    expect(r.code).toBe(1);
  });

  it('idleLifetimeMs in GAMEHOST_EMULATOR_CONFIG ends idle lobbies of the embedded emulator', async () => {
    const env = isolatedEnv({}, { startDelayMs: 0, readyDelayMs: 0, idleLifetimeMs: 100 });
    const lobbyId = await newLobby(env);
    // Read the lobby on a clock the test moves: at the epoch nothing is due yet, then just before and at the deadline.
    const clock = new ManualClock(0);
    const emu = await startEmulator({ dataDir: path.join(env.XDG_DATA_HOME!, 'gamehost', 'emulator'), clock });
    try {
      const { ready_ts: ready } = (await emu.services.lobbies.get(emu.services.games.seeded, NAMESPACE_ID, lobbyId)).lobby;
      clock.advance(ready + 99);
      expect((await emu.services.lobbies.get(emu.services.games.seeded, NAMESPACE_ID, lobbyId)).lobby.stop_ts).toBeNull();
      clock.advance(1);
      expect((await emu.services.lobbies.get(emu.services.games.seeded, NAMESPACE_ID, lobbyId)).lobby).toMatchObject({ stop_ts: ready + 100, exit_code: 0, failed: 0 });
    } finally {
      await emu.close();
    }
    const logs = JSON.parse((await runCli(['lobby', 'logs', lobbyId, '--json'], { env })).stdout);
    expect(logs.lobby.status.stopped).toMatchObject({ failed: false, exit_code: 0 });
    expect(Date.parse(logs.lobby.status.stopped.stop_ts) - Date.parse(logs.lobby.ready_ts)).toBe(100);
  });

  it('a bad idleLifetimeMs is a usage error naming the field', async () => {
    const env = isolatedEnv({}, { idleLifetimeMs: -5 });
    const r = await runCli(['stats'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('idleLifetimeMs must be a whole number of at least 0');
  });

  it.each([
    [{ singlePartMax: 0 }, 'singlePartMax must be a whole number of at least 1'],
    [{ regions: [{ id: '', name: 'Nowhere' }] }, 'regions must be a non-empty list of {"id", "name"}'],
    [{ gameModes: 'duos' }, 'gameModes must be a non-empty list of names'],
    [{ partSize: 1, lobbies: 3 }, 'unknown field lobbies'],
    [{ maxRunningLobbies: 0 }, 'maxRunningLobbies must be a whole number of at least 1'],
    [{ gameModeSettings: { ctf: {} } }, 'gameModeSettings.ctf: no such game mode (gameModes has default, duos, squads)'],
    [{ gameModeSettings: { duos: { ports: { game: { protocol: 'sctp' } } } } }, 'gameModeSettings.duos.ports.game.protocol must be one of tcp, udp, http'],
    [{ gameModeSettings: { duos: { ports: { relay: { protocol: 'udp', range: { min: 9, max: 8 } } } } } }, 'gameModeSettings.duos.ports.relay.range must be {"min", "max"}, ports from 1 to 65535, min not above max'],
    [{ gameModeSettings: { duos: { ports: { 'a-b': { protocol: 'tcp' }, a_b: { protocol: 'udp' } } } } }, 'gameModeSettings.duos.ports: two labels make PORT_a_b'],
    [{ gameModeSettings: { duos: { run: 'x', cmd: 'y' } } }, 'gameModeSettings.duos: unknown field cmd'],
    [{ readiness: 'manual', gameModeSettings: { duos: { run: 'x' } } }, 'gameModeSettings.duos.run goes with readiness run, not manual'],
    [{ gameModeSettings: { duos: { run: 'x' } } }, 'readiness run needs run, or a run in gameModeSettings for every game mode (none for default, squads)'],
    [{ replica: 'a b' }, 'replica must be 1 to 63 letters, digits, ".", "_" or "-", starting with a letter or digit'],
    [{ runBuild: 'latest' }, 'runBuild must be true (the newest build) or an image tag such as "game-server:v1"'],
    [{ run: 'node server.js', runBuild: true }, 'give run (a command) or runBuild (a pushed build), not both'],
    [{ readiness: 'manual', runBuild: 'game-server:v1' }, 'runBuild goes with readiness run, not manual'],
    [{ readiness: 'run' }, "readiness run needs run (the command that starts a lobby's server) or runBuild (a pushed build)"],
    [{ runBuild: true, gameModeSettings: { duos: { run: 'x' } } }, 'gameModeSettings.duos.run: every lobby runs the pushed build with runBuild'],
  ])('config %j is a usage error naming the field, with the same check the emulator applies', async (config, message) => {
    const r = await runCli(['stats'], { env: isolatedEnv({}, config) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(message);
    await expect(startEmulator({ dataDir: tempDir(), config: config as object })).rejects.toThrow(message);
  });
});
