import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { isolatedEnv, runCli } from '../helpers/cli.js';
import { useEmulator } from '../helpers/emulator.js';
import { version } from '../../src/version.js';

describe('the command tree', () => {
  it('--version prints the package version', async () => {
    const r = await runCli(['--version']);
    expect(r).toEqual({ code: 0, stdout: `${version}\n`, stderr: '' });
  });

  it('--help lists every command and the exit codes', async () => {
    const r = await runCli(['--help']);
    expect(r.code).toBe(0);
    for (const word of ['build', 'lobby', 'history', 'stats', 'emulator', 'Exit codes:']) expect(r.stdout).toContain(word);
  });

  it("each command's help has options and examples", async () => {
    const r = await runCli(['lobby', 'create', '--help']);
    expect(r.code).toBe(0);
    expect(r.stdout).toContain('--game-mode <mode>');
    expect(r.stdout).toMatch(/Examples:\n {2}\$ gamehost lobby create/);
  });

  it('help exit-codes', async () => {
    const r = await runCli(['help', 'exit-codes']);
    expect(r.stdout).toMatch(/^ {2}7 {4}upload failed/m);
  });

  it('an unknown command or option is a usage error, exit 2', async () => {
    const cmd = await runCli(['lobyb']);
    expect(cmd.code).toBe(2);
    expect(cmd.stderr).toContain("unknown command 'lobyb'");
    const opt = await runCli(['lobby', 'create', '--game-mod', 'x']);
    expect(opt.code).toBe(2);
    expect(opt.stderr).toMatch(/unknown option '--game-mod'[\s\S]*Did you mean --game-mode\?/);
    expect(opt.stderr).toContain('run `gamehost lobby create --help` for usage');
  });

  // A group (or the program) named with an option it does not take, or a global option without its value, once
  // showed the help and exited 0; a word after a group with a default command was "too many arguments for 'cli'".
  it.each([
    [['--bogus'], "error: unknown option '--bogus'\nrun `gamehost --help` for usage\n"],
    [['--timeout'], "error: option '--timeout <seconds>' argument missing\nrun `gamehost --help` for usage\n"],
    [['lobby', '--bogus'], "error: unknown option '--bogus'\nrun `gamehost lobby --help` for usage\n"],
    [['emulator', 'game', '-qx'], "error: unknown option '-x'\nrun `gamehost emulator game --help` for usage\n"],
    [['lobby', '--token'], "error: option '--token <token>' argument missing\nrun `gamehost lobby --help` for usage\n"],
    [['version', 'nope'], "error: unknown command 'nope'\nrun `gamehost version --help` for usage\n"],
    [['emulator', 'builds', 'nope'], "error: unknown command 'nope'\nrun `gamehost emulator builds --help` for usage\n"],
    [['--json', 'version', 'version'], "error: unknown command 'version'\nrun `gamehost version --help` for usage\n"],
    // --json promises one JSON document; a shell script is not one (it was printed all the same).
    [['completion', 'bash', '--json'], 'error: --json: completion prints a shell script, not JSON\n'],
    // Nor is the help a group or the program would show in a command's place.
    [['--json'], 'error: --json needs a command\nrun `gamehost --help` for usage\n'],
    [['lobby', '--json'], 'error: --json needs a command\nrun `gamehost lobby --help` for usage\n'],
  ])('gamehost %j is a usage error, exit 2, in one line and the way out', async (args, stderr) => {
    const r = await runCli(args);
    expect([r.code, r.stdout, r.stderr]).toEqual([2, '', stderr]);
  });

  it.each([[['-qv']], [['--timeout=5', 'lobby']], [['--timeout', '5']], [['--token', '-x', 'lobby']]])('gamehost %j shows the help, exit 0', async (args) => {
    const r = await runCli(args);
    expect([r.code, r.stderr]).toEqual([0, '']);
    expect(r.stdout).toMatch(/^Usage: gamehost /);
  });

  it('global options work before and after the subcommand', async () => {
    const env = isolatedEnv();
    const before = await runCli(['--json', 'stats'], { env });
    const after = await runCli(['stats', '--json'], { env });
    expect(JSON.parse(before.stdout)).toEqual(JSON.parse(after.stdout));
  });
});

describe('failures map to documented exit codes with one line each', () => {
  const fx = useEmulator();

  it('a bad token: exit 3 with the login hint, and the token never printed', async () => {
    const r = await runCli(['history', 'export', '--since', '1h', '-o', '-', '--verbose'], { env: { ...fx.env, GAMEHOST_TOKEN: 'cloud.bogus.sig' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/^error: .*\(API_UNAUTHORIZED, ray .+\)$/m);
    expect(r.stderr).toContain('gamehost login');
    expect(r.stderr).toMatch(/^> POST http:\/\/127\.0\.0\.1:\d+\/cloud\/games\/.+\/export-history$/m);
    expect(r.stderr + r.stdout).not.toContain('cloud.bogus.sig');
  });

  it('--verbose never prints a real token either', async () => {
    const r = await runCli(['lobby', 'create', '--game-mode', 'default', '--verbose'], { env: fx.env });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/^< 200 OK in \d+ ms \(ray .+\)$/m);
    for (const t of Object.values(fx.emu.tokens)) expect(r.stderr + r.stdout).not.toContain(t);
  });

  it('flags win over the environment', async () => {
    const r = await runCli(['stats', '--namespace-token', 'pub_x.bad.sig'], { env: fx.env });
    expect(r.code).toBe(3);
  });

  it('RIVET_API_ENDPOINT and RIVET_TOKEN are read as fallbacks', async () => {
    const { GAMEHOST_ENDPOINT, GAMEHOST_TOKEN, ...rest } = fx.env;
    const r = await runCli(['history', 'export', '--since', '1h', '-o', '-'], {
      env: { ...rest, RIVET_API_ENDPOINT: GAMEHOST_ENDPOINT, RIVET_TOKEN: GAMEHOST_TOKEN },
    });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('local emulator');
  });

  it('connection refused on loopback: exit 6, one line, and the way to start an emulator there', async () => {
    const server = http.createServer();
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await new Promise((r) => server.close(r));
    const r = await runCli(['stats'], { env: { ...fx.env, GAMEHOST_ENDPOINT: `http://127.0.0.1:${port}` } });
    expect(r.code).toBe(6);
    expect(r.stderr.trim()).toBe(
      `error: could not reach 127.0.0.1:${port}: connection refused (ECONNREFUSED)\n  nothing listens there: start the emulator with \`gamehost emulator serve\``,
    );
  });

  // A proxy's HTML error page is something the emulator never produces: a bare server stands in for it.
  it('an HTML 502 page after retries: exit 5 and one readable line', async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => {
      hits++;
      res.writeHead(502, { 'content-type': 'text/html' }).end('<html><head><title>502 Bad Gateway</title></head><body><h1>nginx</h1></body></html>');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const r = await runCli(['stats'], { env: { ...fx.env, GAMEHOST_ENDPOINT: `http://127.0.0.1:${port}` } });
      expect(r.code).toBe(5);
      expect(r.stderr.trim()).toBe('error: the service answered 502 Bad Gateway (an HTML page: "502 Bad Gateway") (HTTP_502)');
      expect(hits).toBe(3); // the test retry policy's attempts: GET is idempotent
    } finally {
      server.close();
    }
  });

  it('lobby create is not re-sent after a 503 (not idempotent), but is after a 429', async () => {
    let hits = 0;
    let status = 503;
    const server = http.createServer((_req, res) => {
      hits++;
      res.writeHead(status, { 'content-type': 'application/json', 'retry-after': '0' });
      res.end(JSON.stringify({ code: status === 429 ? 'API_RATE_LIMIT' : 'ERROR', message: 'busy', ray_id: 'r1' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const e = { ...fx.env, GAMEHOST_ENDPOINT: `http://127.0.0.1:${port}` };
      const r = await runCli(['lobby', 'create', '--game-mode', 'default'], { env: e });
      expect(r.code).toBe(5);
      expect(hits).toBe(1);
      hits = 0;
      status = 429;
      const limited = await runCli(['lobby', 'create', '--game-mode', 'default'], { env: e });
      expect(limited.code).toBe(5);
      expect(limited.stderr).toContain('(API_RATE_LIMIT, ray r1)');
      expect(hits).toBe(3);
    } finally {
      server.close();
    }
  });

  it('control sequences in a server message are neutralised', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(400, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ code: 'X\u001b[2J', message: 'bad \u001b]0;pwned\u0007thing\u001b[31m', ray_id: 'r' }));
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const port = (server.address() as AddressInfo).port;
      const r = await runCli(['stats'], { env: { ...fx.env, GAMEHOST_ENDPOINT: `http://127.0.0.1:${port}` } });
      expect(r.stderr.trim()).toBe('error: bad thing (X, ray r)');
    } finally {
      server.close();
    }
  });

  it('under GitHub Actions a failure is also an ::error:: annotation', async () => {
    const r = await runCli(['lobby', 'logs', '00000000-0000-4000-8000-000000000000'], { env: { ...fx.env, GITHUB_ACTIONS: 'true' } });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^::error::.*API_NOT_FOUND/m);
  });
});
