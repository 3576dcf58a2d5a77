// lobby find, join, list, region list and emulator lobby env end to end against an emulator: in-process in a
// terminal and piped, and the real bin on a pseudo-terminal and piped.
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { plain, runCli } from '../helpers/cli.js';
import { stopLobby, useEmulator } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('the matchmaker from the command line', () => {
  const fx = useEmulator();

  it('lobby find creates, then finds the same lobby; -q prints the token alone; --json the answer', async () => {
    const first = await runCli(['lobby', 'find', '--game-mode', 'duos', '--region', 'lnd-fra', '--tag', 'map=dust', '--json'], { env: fx.env });
    expect(first.code, first.stderr).toBe(0);
    const seat = JSON.parse(first.stdout);
    expect(seat.lobby.region).toEqual({ region_id: 'lnd-fra', display_name: 'Frankfurt' });
    const token = await runCli(['lobby', 'find', '--game-mode', 'duos', '--region', 'lnd-fra', '--tag', 'map=dust', '-q'], { env: fx.env });
    expect(token.stdout).toMatch(/^player\.\S+\n$/);
    const tty = await runCli(['lobby', 'find', '--game-mode', 'duos', '--region', 'lnd-fra', '--tag', 'map=dust'], { env: fx.env, tty: true });
    const out = plain(tty.stdout);
    expect(out).toMatch(new RegExp(`^✓ Found a lobby in Frankfurt\\nLobby +${seat.lobby.lobby_id}\\n`));
    expect(out).toContain(`127.0.0.1:${seat.ports.default.port}`);
  });

  it('lobby join: the lobby, an address per port and the token, piped as fields; refusals are one line', async () => {
    const created = JSON.parse((await runCli(['lobby', 'create', '--game-mode', 'squads', '--max-players', '2', '--json'], { env: fx.env })).stdout);
    const id = created.lobby.lobby_id;
    const joined = await runCli(['lobby', 'join', id], { env: fx.env });
    expect(joined.code, joined.stderr).toBe(0);
    const fields = joined.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(fields[0]).toEqual(['lobby_id', id]);
    expect(fields.find((f) => f[0] === 'player_token')![1]).toMatch(/^player\./);
    expect(fields.find((f) => f[0] === 'port' && f[1] === 'default')![2]).toBe(`127.0.0.1:${created.ports.default.port}`);
    const full = await runCli(['lobby', 'join', id], { env: fx.env });
    expect(full.code).not.toBe(0);
    expect(full.stderr).toMatch(/^error: Lobby \S+ is full: 2 players at most\. \(MATCHMAKER_LOBBY_FULL/);
    expect(full.stderr).not.toMatch(/\n\s+at /);
    const bad = await runCli(['lobby', 'join', 'nope'], { env: fx.env });
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('the lobby id must be a UUID');
  });

  it('lobby list: a table in a terminal, tab-separated piped, ids alone with -q; region list', async () => {
    expect((await runCli(['lobby', 'find', '--game-mode', 'default', '--tag', 'list=1', '-q'], { env: fx.env })).code).toBe(0);
    const table = plain((await runCli(['lobby', 'list', '--state'], { env: fx.env, tty: true })).stdout);
    expect(table.split('\n')[0]).toMatch(/^LOBBY\s+GAME MODE\s+REGION\s+PLAYERS\s+STATE$/);
    const rows = (await runCli(['lobby', 'list'], { env: fx.env })).stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(rows.length).toBeGreaterThan(0);
    for (const row of rows) {
      expect(row[0]).toMatch(UUID);
      expect(row[3]).toMatch(/^\d+\/\d+$/);
    }
    const ids = (await runCli(['lobby', 'list', '-q'], { env: fx.env })).stdout.trim().split('\n');
    expect(ids).toEqual(rows.map((r) => r[0]));
    const regions = await runCli(['region', 'list'], { env: fx.env });
    expect(regions.stdout).toBe('lnd-atl\tAtlanta\tLinode\nlnd-fra\tFrankfurt\tLinode\nlnd-sgp\tSingapore\tLinode\n');
    expect(JSON.parse((await runCli(['region', 'list', '--json'], { env: fx.env })).stdout).regions).toHaveLength(3);
  });

  it('lobby find refuses bad flags before any request', async () => {
    for (const [args, message] of [
      [[], /--game-mode is required/],
      [['--game-mode', 'duos', '--tag', 'x'], /--tag must be key=value/],
      [['--game-mode', 'duos', '--max-players', '0'], /--max-players must be at least 1/],
    ] as const) {
      const r = await runCli(['lobby', 'find', ...args], { env: fx.env });
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(message);
    }
    const none = await runCli(['lobby', 'find', '--game-mode', 'default', '--tag', 'map=none', '--no-create'], { env: fx.env });
    expect(none.code).not.toBe(0);
    expect(none.stderr).toContain('MATCHMAKER_NO_AVAILABLE_LOBBIES');
  });

  it('emulator lobby env: export lines for eval, --json one object, --shell powershell; its port is the lobby\'s', async () => {
    const seat = JSON.parse((await runCli(['lobby', 'find', '--game-mode', 'default', '--tag', 'env=1', '--json'], { env: fx.env })).stdout);
    const id = seat.lobby.lobby_id;
    const json = JSON.parse((await runCli(['emulator', 'lobby', 'env', id, '--json'], { env: fx.env })).stdout);
    expect(json.RIVET_LOBBY_ID).toBe(id);
    expect(json.PORT_default).toBe(String(seat.ports.default.port));
    expect(json.RIVET_LOBBY_TAGS).toBe('{"env":"1"}');
    const posix = (await runCli(['emulator', 'lobby', 'env', id], { env: fx.env })).stdout;
    expect(posix).toContain(`export RIVET_LOBBY_ID=${id}\n`);
    expect(posix).toContain("export RIVET_LOBBY_TAGS='{\"env\":\"1\"}'\n");
    // What `eval` makes of it, in a real shell.
    const sh = spawnSync('sh', ['-c', `${posix}\nprintf '%s|%s' "$RIVET_LOBBY_TAGS" "$PORT_default"`], { encoding: 'utf8' });
    expect(sh.stdout).toBe(`{"env":"1"}|${seat.ports.default.port}`);
    const ps = (await runCli(['emulator', 'lobby', 'env', id, '--shell', 'powershell'], { env: fx.env })).stdout;
    expect(ps).toContain(`$env:RIVET_LOBBY_ID = '${id}'\n`);
    const noServer = await runCli(['emulator', 'lobby', 'env', id], { env: { ...fx.env, GAMEHOST_ENDPOINT: undefined } });
    expect(noServer.code).toBe(2);
    expect(noServer.stderr).toContain('needs a running emulator');
  });

  it('emulator lobby env of a stopped lobby refuses in one line, exit 4, and prints nothing to eval', async () => {
    const seat = JSON.parse((await runCli(['lobby', 'create', '--game-mode', 'default', '--json'], { env: fx.env })).stdout);
    const id = seat.lobby.lobby_id;
    await stopLobby(fx.emu.endpoint, id);
    for (const args of [[], ['--json'], ['--shell', 'powershell']]) {
      const r = await runCli(['emulator', 'lobby', 'env', id, ...args], { env: fx.env });
      expect(r.code).toBe(4);
      expect(r.stdout).toBe('');
      expect(r.stderr).toBe(`error: lobby ${id} has stopped: no server is to start with its environment; make a new lobby\n`);
    }
  });

  it('the real bin: region list and lobby list on a pseudo-terminal and piped', async () => {
    // Asynchronous: the emulator answering them runs in this process.
    const run = promisify(execFile);
    const env = { ...process.env, ...fx.env } as NodeJS.ProcessEnv;
    const tty = await run('script', ['-qec', `"${process.execPath}" "${BIN}" region list`, '/dev/null'], { env });
    expect(plain(tty.stdout).replace(/\r/g, '')).toMatch(/REGION\s+NAME\s+PROVIDER\nlnd-atl\s+Atlanta\s+Linode\n/);
    const piped = await run(process.execPath, [BIN, 'lobby', 'list', '-q'], { env });
    expect(piped.stdout.trim().split('\n').length).toBeGreaterThan(0);
    for (const line of piped.stdout.trim().split('\n')) expect(line).toMatch(UUID);
  });
});

describe('lobby find and join wait for the lobby to be ready', () => {
  // Lobbies that wait for their server's ready call, which never comes.
  const fx = useEmulator({ readiness: 'manual' });
  /** The real bin, asynchronously: the emulator answering it runs in this process (and goes on holding a request it gave up on). */
  const gamehost = (args: string[]) =>
    new Promise<{ code: number | null; stderr: string }>((resolve) => {
      execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...fx.env } }, (err, _stdout, stderr) =>
        resolve({ code: err ? (err as { code?: number }).code ?? null : 0, stderr }),
      );
    });

  it('lobby join of an unknown lobby: exit 4, as lobby logs and lobby stop; without --timeout the wait is 60 s, past the 50 s the service holds it', async () => {
    const unknown = await gamehost(['lobby', 'join', '00000000-0000-4000-8000-000000000000', '--verbose']);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr.split('\n')).toContain('  (the answer awaited up to 60 s)');
    expect(unknown.stderr).toMatch(/^error: Lobby 00000000-0000-4000-8000-000000000000 not found\. \(MATCHMAKER_LOBBY_NOT_FOUND, ray [\w-]+\)$/m);
  });

  it('running out of --timeout says the lobby did not become ready, not that the network failed', async () => {
    const id = (await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env: fx.env })).stdout.trim();
    expect(id).toMatch(UUID);
    const held = await gamehost(['lobby', 'join', id, '--timeout', '1', '--verbose']);
    expect(held.code).toBe(6);
    expect(held.stderr).toContain(`error: lobby ${id} did not become ready: no answer in 1 s\n  its server must call ready (POST /matchmaker/lobbies/ready) once it listens; --timeout waits longer\n`);
    expect(held.stderr).not.toMatch(/could not reach|HEADERS_TIMEOUT/);
    const found = await gamehost(['lobby', 'find', '--game-mode', 'default', '--timeout', '1']);
    expect(found.code).toBe(6);
    expect(found.stderr.split('\n')[0]).toBe('error: the lobby found did not become ready: no answer in 1 s');
  });
});

describe("a game mode's own ports (gameModeSettings), from the command line", () => {
  const fx = useEmulator({
    gameModes: ['default', 'duos'],
    gameModeSettings: { duos: { ports: { game: { protocol: 'udp' }, 'relay-set': { protocol: 'tcp', range: { min: 26000, max: 26009 } } } } },
  });

  it('lobby create answers them, lobby join prints an address per port, emulator lobby env exports them as production names them', async () => {
    const created = JSON.parse((await runCli(['lobby', 'create', '--game-mode', 'duos', '--json'], { env: fx.env })).stdout);
    const id = created.lobby.lobby_id;
    const game = created.ports.game.port;
    expect(game).toBeGreaterThan(0);
    expect(created.ports['relay-set'].port_range).toEqual({ min: 26000, max: 26009 });
    expect(created.ports.default).toBeUndefined();
    const joined = (await runCli(['lobby', 'join', id], { env: fx.env })).stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(joined.find((f) => f[0] === 'port' && f[1] === 'game')![2]).toBe(`127.0.0.1:${game}`);
    const env = JSON.parse((await runCli(['emulator', 'lobby', 'env', id, '--json'], { env: fx.env })).stdout);
    expect(env).toMatchObject({ PORT_game: String(game), PORT_RANGE_MIN_relay_set: '26000', PORT_RANGE_MAX_relay_set: '26009' });
    expect(env.PORT_default).toBeUndefined();
  });
});
