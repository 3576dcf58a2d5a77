// Every failure class ends with its documented exit code and one readable line, against the emulator where it
// can produce the failure, and against a bare local server where only a broken or hostile service would.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Env } from '../../src/shared/io.js';
import { isolatedEnv, runCli } from '../helpers/cli.js';
import { useEmulator } from '../helpers/emulator.js';

async function serve(handler: http.RequestListener) {
  const server = http.createServer(handler);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

describe('exit codes', () => {
  const fx = useEmulator();

  it('0: ok', async () => {
    const r = await runCli(['stats', '--json'], { env: fx.env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ player_count: 0, game_modes: expect.any(Object) });
  });

  it('1: the service refused the request (400), with its code, ray id and docs link', async () => {
    const r = await runCli(['lobby', 'create', '--game-mode', 'nope'], { env: fx.env });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: Game mode "nope" not found; this namespace has default, duos and squads\. \(MATCHMAKER_GAME_MODE_NOT_FOUND, ray [\w-]+\)\n/);
    expect(r.stdout).toBe('');
  });

  it('1: an unexpected exception prints one line and where the full report is, no stack trace', async () => {
    // A service answering 200 with a body of the wrong shape is what makes the CLI itself fail.
    const broken = await serve((_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{"player_count": 3, "game_modes": null}'));
    try {
      const e: Env = { ...fx.env, GAMEHOST_ENDPOINT: broken.endpoint };
      const r = await runCli(['stats', '--verbose'], { env: e, tty: true });
      expect(r.code).toBe(1);
      const lines = r.stderr.split('\n').filter((l) => !/^[<>] |^target /.test(l));
      expect(lines[0]).toMatch(/^\S*error\S*: unexpected failure: .+$/);
      const report = /^ {2}a full report was written to (.+)$/.exec(lines[1]!)?.[1];
      expect(report).toBeDefined();
      expect(path.dirname(report!)).toBe(path.join(e.XDG_STATE_HOME!, 'gamehost', 'crash'));
      expect(r.stderr).not.toMatch(/^\s+at /m);
      const body = fs.readFileSync(report!, 'utf8');
      expect(body).toMatch(/^gamehost \S+ node \S+ /);
      expect(body).toMatch(/^\s+at /m);
      expect(fs.statSync(report!).mode & 0o777).toBe(0o600);
      for (const t of Object.values(fx.emu.tokens)) expect(body + r.stderr).not.toContain(t);
    } finally {
      await broken.close();
    }
  });

  it('2: usage or invalid input, found before any request is sent', async () => {
    let hits = 0;
    const counter = await serve((_req, res) => {
      hits++;
      res.writeHead(500).end();
    });
    try {
      const e = { ...fx.env, GAMEHOST_ENDPOINT: counter.endpoint };
      const cases: [string[], string][] = [
        [['lobby', 'logs', 'not-a-uuid'], 'error: the lobby id must be a UUID, not "not-a-uuid"\n'],
        [['stats', '--endpoint', 'ht!tp://::'], 'error: --endpoint is not a valid URL: ht!tp://:: ("ht!tp" is not a scheme)\n  e.g. https://api.rivet.gg or 127.0.0.1:6420\n'],
        [['history', 'export', '--since', '1h', '--game', 'mygame'], 'error: --game must be a UUID, not "mygame"\n'],
        [['lobby', 'logs', '12345678-1234-4234-8234-123456789abc', '--namespace', 'Prod!'], 'error: --namespace must be a UUID or a name id (staging), not "Prod!"\n'],
        [['stats', '--timeout', '0'], 'error: --timeout must be a positive number of seconds, not "0"\n'],
        [['lobby', 'create'], 'error: --game-mode is required\n  e.g. --game-mode default\n'],
        [['stats', '--profile', 'nope'], 'error: --profile: no profile "nope"\n  create one with `gamehost login --profile <name>`\n'],
        [['login', '--no-input'], 'error: login would need a prompt, and --no-input forbids prompts\n  pass --token-stdin (and --namespace-token-stdin) with the tokens piped in, one a line\n'],
        [['completion', 'powershell'], 'error: the shell must be one of bash, zsh, fish, not "powershell"\n'],
        // Errors name things in words, never by their help placeholders (`<file>`, `[name]`).
        [['profile', 'show', 'nope'], 'error: no profile "nope"\n  create one with `gamehost login --profile <name>`\n'],
        [['build', 'push', 'no-such-server.tar', '--tag', 'a:b'], 'error: no-such-server.tar: no such file\n'],
        [['stats', '--endpoint', 'http://10.0.0.1'], 'error: refusing plain-http endpoint 10.0.0.1: tokens would travel unencrypted\n  use https://, or pass --insecure-http if you really mean it\n'],
      ];
      for (const [args, stderr] of cases) {
        const r = await runCli(args, { env: e });
        expect({ args, code: r.code, stderr: r.stderr, stdout: r.stdout }).toEqual({ args, code: 2, stderr, stdout: '' });
      }
      // The same ids from the environment are refused the same way, naming the variable.
      const fromEnv = await runCli(['history', 'export', '--since', '1h'], { env: { ...e, GAMEHOST_GAME: 'mygame' } });
      expect([fromEnv.code, fromEnv.stderr]).toEqual([2, 'error: GAMEHOST_GAME must be a UUID, not "mygame"\n']);
      expect(hits).toBe(0);
    } finally {
      await counter.close();
    }
  });

  it('3: not authenticated (401) or forbidden (403), with the login hint', async () => {
    const bad = await runCli(['lobby', 'logs', '00000000-0000-4000-8000-000000000000'], { env: { ...fx.env, GAMEHOST_TOKEN: 'cloud.bogus.sig' } });
    expect(bad.code).toBe(3);
    expect(bad.stderr).toMatch(/^error: Unauthorized: .+ \(API_UNAUTHORIZED, ray [\w-]+\)\n/);
    expect(bad.stderr).toContain('  check the token, or run `gamehost login`\n');
    // A namespace token where a cloud token is needed: the service knows the token, and forbids the call.
    const wrongKind = await runCli(['history', 'export', '--since', '1h', '-o', '-'], { env: { ...fx.env, GAMEHOST_TOKEN: fx.emu.tokens.public } });
    expect(wrongKind.code).toBe(3);
    expect(wrongKind.stderr).toMatch(/\(API_FORBIDDEN, ray [\w-]+\)\n(?: {2}docs: .+\n)? {2}check the token, or run `gamehost login`\n$/);
  });

  it('4: not found', async () => {
    const r = await runCli(['lobby', 'logs', '00000000-0000-4000-8000-000000000000'], { env: fx.env });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^error: .*not found.* \(API_NOT_FOUND, ray [\w-]+\)\n/);
  });

  it('5: rate limited after every retry (the embedded emulator limiting every call)', async () => {
    const r = await runCli(['stats'], { env: isolatedEnv({ GAMEHOST_EMULATOR_FAULTS: 'rate-limit=1' }) });
    expect(r.code).toBe(5);
    expect(r.stderr).toMatch(/^error: Too many requests; try again later\. \(API_RATE_LIMIT, ray [\w-]+\)\n {2}docs: https:\/\/rivet\.gg\/docs\/general\/errors#api-rate-limit\n/m);
  });

  it('5: service unavailable after every retry', async () => {
    let hits = 0;
    let lines = 0;
    let lookups = 0;
    const down = await serve((req, res) => {
      // The logs and each stream's lines, retried; the game's regions (for the region's name), asked once and never retried.
      if (req.url?.includes('/logs/lobbies/')) hits++;
      else if (req.url?.includes('/logs?stream=')) lines++;
      else lookups++;
      res.writeHead(503, { 'content-type': 'application/json' }).end(JSON.stringify({ code: 'ERROR', message: 'An internal error has occurred (ray r9).', ray_id: 'r9' }));
    });
    try {
      const r = await runCli(['lobby', 'logs', '00000000-0000-4000-8000-000000000000'], { env: { ...fx.env, GAMEHOST_ENDPOINT: down.endpoint } });
      expect(r.code).toBe(5);
      expect(r.stderr).toBe('error: An internal error has occurred (ray r9). (ERROR, ray r9)\n');
      expect([hits, lines, lookups]).toEqual([3, 6, 1]);
    } finally {
      await down.close();
    }
  });

  it('6: a service that does not answer within --timeout', async () => {
    let hits = 0;
    const silent = await serve(() => void hits++);
    try {
      const r = await runCli(['stats', '--timeout', '0.2'], { env: { ...fx.env, GAMEHOST_ENDPOINT: silent.endpoint } });
      expect(r.code).toBe(6);
      expect(r.stderr).toBe(`error: could not reach ${new URL(silent.endpoint).host}: no answer in time (HEADERS_TIMEOUT)\n`);
      // Three attempts, each given up after --timeout (the default 30 s would outlast the test).
      expect(hits).toBe(3);
    } finally {
      await silent.close();
    }
  });
});
