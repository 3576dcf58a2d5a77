import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, plain, runCli, tempDir } from '../helpers/cli.js';
import { stopLobby, useEmulator } from '../helpers/emulator.js';
import { until } from '../helpers/lobby-server.js';
import { replicaEnv, serve, SLOW, stopReplica, type Replica } from '../helpers/replica.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('lobby create against the embedded emulator', () => {
  const env = isolatedEnv();

  it('--json prints exactly the response body on stdout', async () => {
    const r = await runCli(['lobby', 'create', '--game-mode', 'duos', '--region', 'lnd-fra', '--tag', 'map=dust', '--json'], { env });
    expect(r.code).toBe(0);
    const body = JSON.parse(r.stdout);
    expect(body.lobby.lobby_id).toMatch(UUID);
    expect(body.lobby.region).toEqual({ region_id: 'lnd-fra', display_name: 'Frankfurt' });
    expect(typeof body.player.token).toBe('string');
    expect(Object.keys(body.ports).length).toBeGreaterThan(0);
    // The embedded emulator's notice is for people: never under --json.
    expect(r.stderr).not.toContain('local emulator');
  });

  it('in a terminal shows the lobby, the player token and a ports table', async () => {
    const r = await runCli(['lobby', 'create', '--game-mode', 'default', '--region', 'lnd-atl'], { env, tty: true });
    expect(r.code).toBe(0);
    r.stdout = plain(r.stdout);
    expect(r.stdout).toMatch(/^✓ Created a lobby in Atlanta\nLobby +[0-9a-f-]{36}\nRegion +Atlanta \(lnd-atl\)\n/);
    // The token is long: alone on its line, whole, so it copies in one go.
    expect(r.stdout).toMatch(/\nPlayer token\n\S+\.\S+\n/);
    expect(r.stdout).toMatch(/PORT\s+ADDRESS\s+TLS/);
    expect(r.stdout).toMatch(/\d+\.\d+\.\d+\.\d+:\d+-\d+|[a-z0-9.-]+:\d+-\d+/);
  });

  it('piped prints tab-separated fields a script can cut', async () => {
    const r = await runCli(['lobby', 'create', '--game-mode', 'squads'], { env });
    expect(r.code).toBe(0);
    const lines = r.stdout.trim().split('\n').map((l) => l.split('\t'));
    expect(lines[0]![0]).toBe('lobby_id');
    expect(lines[0]![1]).toMatch(UUID);
    expect(lines.find((l) => l[0] === 'region')?.[1]).toBe('lnd-atl');
    expect(lines.filter((l) => l[0] === 'port').length).toBeGreaterThan(0);
  });

  it.each([
    [['--tag', 'novalue'], /--tag must be key=value/],
    [['--max-players', '-1'], /--max-players must be at least 1/],
    [['--max-players', 'ten'], /--max-players must be a whole number/],
    [['--config', '{bad'], /--config: the value is not valid JSON/],
    [['--config', '@/nonexistent/cfg.json'], /--config: cannot read .*no such file/],
    [['--publicity', 'secret'], /publicity/],
    [['--hcaptcha', 'a', '--turnstile', 'b'], /cannot be used with/],
  ])('refuses %j before any request, exit 2', async (extra, message) => {
    const r = await runCli(['lobby', 'create', '--game-mode', 'default', ...(extra as string[])], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toContain('local emulator');
    expect(r.stdout).toBe('');
    expect(r.stderr).not.toMatch(/\n\s+at /);
  });

  it('requires --game-mode', async () => {
    const r = await runCli(['lobby', 'create'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--game-mode is required');
  });

  it('an unknown game mode is the service error in one line, naming the game modes there are', async () => {
    const r = await runCli(['lobby', 'create', '--game-mode', 'battle-royale'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: Game mode "battle-royale" not found; this namespace has default, duos and squads\. \(MATCHMAKER_GAME_MODE_NOT_FOUND, ray [0-9a-f-]+\)$/m);
  });

  it('an unknown region is the service error in one line, naming the regions there are', async () => {
    const r = await runCli(['lobby', 'create', '--game-mode', 'default', '--region', 'mars'], { env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /^error: Region "mars" not found; this namespace has lnd-atl \(Atlanta\), lnd-fra \(Frankfurt\) and lnd-sgp \(Singapore\)\. \(MATCHMAKER_REGION_NOT_FOUND, ray [0-9a-f-]+\)$/m,
    );
  });
});

describe('lobby logs of a lobby whose server the emulator runs (its measured metrics)', () => {
  // `emulator serve --run` in its own process (its servers and their sampling are not this test's handles), with a
  // server that idles: its samples are a real process's CPU and resident memory.
  let server: Replica | undefined;
  const run = { env: {} as Record<string, string | undefined> };
  beforeAll(async () => {
    server = await serve(['--data-dir', tempDir(), '--run', `"${process.execPath}" -e "setInterval(() => {}, 1000)"`]);
    run.env = { ...isolatedEnv(), ...replicaEnv(tempDir(), server) };
  }, SLOW.timeout);
  afterAll(() => stopReplica(server));

  /** A lobby whose server has been sampled. */
  async function measuredLobby(): Promise<string> {
    const made = await runCli(['lobby', 'create', '--game-mode', 'default', '--json'], { env: run.env });
    expect(made.code, made.stderr).toBe(0);
    const id = JSON.parse(made.stdout).lobby.lobby_id as string;
    await until('a sample of its server', async () => {
      const logs = await runCli(['lobby', 'logs', id, '--json'], { env: run.env });
      return JSON.parse(logs.stdout).metrics?.cpu.length >= 1 ? true : undefined;
    });
    return id;
  }

  it('--chart draws CPU and memory with axes; --utc shows times in UTC', async () => {
    const id = await measuredLobby();
    const r = await runCli(['lobby', 'logs', id, '--chart', '--utc'], { env: { ...run.env, NO_COLOR: '1' }, tty: true, columns: 80 });
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/created\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2} UTC/);
    expect(r.stdout).toMatch(/^ {2}CPU \(% of one core\)$/m);
    expect(r.stdout).toMatch(/^ {2}Memory \(MiB of 1838 MiB allocated\)$/m);
    expect(r.stdout).toMatch(/^ +[\d.]+% ┤/m);
    expect(r.stdout).toMatch(/^ +└─+$/m);
    expect(r.stdout).toMatch(/Memory +now [\d.]+ MiB \(\d+%\) +peak [\d.]+ MiB +mean [\d.]+ MiB +of 1838 MiB/);
    for (const line of r.stdout.split('\n')) expect([...line].length).toBeLessThanOrEqual(79);
  });

  it('without --chart: sparklines against 100% CPU and the allocated memory', async () => {
    const id = await measuredLobby();
    const r = await runCli(['lobby', 'logs', id], { env: { ...run.env, NO_COLOR: '1' }, tty: true, columns: 120 });
    expect(r.stdout).toMatch(/^ {2}CPU +[▁▂▃▄▅▆▇█]+ +now [\d.]+% +peak [\d.]+% +mean [\d.]+%$/m);
    expect(r.stdout).toMatch(/^ {2}Memory +[▁▂▃▄▅▆▇█]+ +now /m);
  });

  it('a stopped lobby keeps its run\'s metrics: its memory peak, the latest sample called "last", not "now"', async () => {
    const id = await measuredLobby();
    await stopLobby(server!.info.endpoint, id, { exit_code: 0 });
    const r = await runCli(['lobby', 'logs', id], { env: { ...run.env, NO_COLOR: '1' }, tty: true, columns: 120 });
    expect(r.stdout).toContain('■ stopped (exit code 0)');
    expect(r.stdout).toMatch(/^ {2}Memory +(\S+ +)?last [\d.]+ MiB \(\d+%\) +peak [\d.]+ MiB +mean [\d.]+ MiB +of 1838 MiB$/m);
    expect(r.stdout).not.toContain('none');
  });
});

describe('lobby logs', () => {
  const fx = useEmulator();

  async function newLobby(): Promise<string> {
    const r = await runCli(['lobby', 'create', '--game-mode', 'default', '--json'], { env: fx.env });
    expect(r.code).toBe(0);
    return JSON.parse(r.stdout).lobby.lobby_id;
  }

  it('shows a running lobby with its timeline; no server runs it, so no metrics, said in one line', async () => {
    const id = await newLobby();
    const r = await runCli(['lobby', 'logs', id], { env: fx.env, tty: true });
    expect(r.code).toBe(0);
    r.stdout = plain(r.stdout);
    expect(r.stdout).toContain(`Lobby ${id}`);
    expect(r.stdout).toContain('● running');
    expect(r.stdout).toMatch(/created\s+\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}/);
    expect(r.stdout).toMatch(/started\s+\d{4}-\d{2}-\d{2} .* \+\d/);
    expect(r.stdout).toMatch(/ready\s+\d{4}/);
    expect(r.stdout).toMatch(/\nMetrics  none: no server of this lobby is measured\n/);
    expect(r.stdout).not.toMatch(/CPU|MiB/);
    const piped = await runCli(['lobby', 'logs', id], { env: fx.env });
    expect(piped.stdout).not.toMatch(/^(job|cpu_percent_now|memory_bytes_now)\t/m);
  });

  it('names the region as lobby create did, from one look at the game\'s regions; --json prints the body alone', async () => {
    const id = await newLobby();
    const tty = await runCli(['lobby', 'logs', id, '--verbose'], { env: { ...fx.env, NO_COLOR: '1' }, tty: true, columns: 80 });
    expect(tty.code).toBe(0);
    expect(tty.stdout).toMatch(/^Region {5}Atlanta \(lnd-atl\)$/m);
    expect(tty.stderr.match(/^> GET \S+\/cloud\/games\/[0-9a-f-]+$/gm)).toHaveLength(1);
    const piped = await runCli(['lobby', 'logs', id], { env: fx.env });
    expect(piped.stdout).toMatch(/^region_id\t[0-9a-f-]{36}\nregion\tlnd-atl\n/m);
    const json = await runCli(['lobby', 'logs', id, '--json', '--verbose'], { env: fx.env });
    expect(json.stderr).not.toMatch(/\/cloud\/games\/[0-9a-f-]+\n/);
    expect(JSON.parse(json.stdout).lobby.region_id).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('--json prints the body: status running', async () => {
    const id = await newLobby();
    const r = await runCli(['lobby', 'logs', id, '--json'], { env: fx.env });
    const body = JSON.parse(r.stdout);
    expect(body.lobby.lobby_id).toBe(id);
    expect(body.lobby.status.stopped ?? null).toBeNull();
    expect(body.lobby.status).toHaveProperty('running');
  });

  it('shows a stopped lobby with its exit code, and a failed one', async () => {
    const ok = await newLobby();
    await stopLobby(fx.emu.endpoint, ok, { exit_code: 0 });
    const clean = await runCli(['lobby', 'logs', ok], { env: { ...fx.env, NO_COLOR: '1' }, tty: true });
    expect(clean.stdout).toContain('■ stopped (exit code 0)');
    expect(clean.stdout).toMatch(/stopped\s+\d{4}-\d{2}-\d{2}/);
    expect(clean.stdout).toMatch(/\nMetrics  none: the service sent no samples for this lobby\n/);

    const bad = await newLobby();
    await stopLobby(fx.emu.endpoint, bad, { exit_code: 137, failed: true });
    const failed = await runCli(['lobby', 'logs', bad], { env: fx.env });
    const fields = Object.fromEntries(failed.stdout.trim().split('\n').map((l) => l.split('\t')));
    expect(fields.status).toBe('failed');
    expect(fields.exit_code).toBe('137');
    expect(fields.stopped_ts).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/);
  });

  it.each([
    [['--interval', '5'], /--interval goes with --watch/],
    [['--watch', '--interval', '0'], /--interval must be a number of seconds from 0\.1 to 86400 \(a day\)/],
    [['--watch', '--interval', 'soon'], /--interval must be a number of seconds/],
    [['--chart', '--json'], /--chart draws for people/],
  ])('refuses %j before any request, exit 2', async (extra, message) => {
    const r = await runCli(['lobby', 'logs', '00000000-0000-4000-8000-000000000000', ...(extra as string[])], { env: fx.env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
    expect(r.stdout).toBe('');
  });

  it('an unknown lobby exits 4; a malformed id exits 2 before any request', async () => {
    const missing = await runCli(['lobby', 'logs', '00000000-0000-4000-8000-000000000000'], { env: fx.env });
    expect(missing.code).toBe(4);
    expect(missing.stderr).toMatch(/^error: .*\(API_NOT_FOUND, ray /m);
    const malformed = await runCli(['lobby', 'logs', 'not-a-uuid'], { env: fx.env });
    expect(malformed.code).toBe(2);
    expect(malformed.stderr).toContain('the lobby id must be a UUID');
  });
});
