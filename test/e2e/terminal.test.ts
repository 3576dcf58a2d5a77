// The terminal contract seen from outside: when there is colour, how tables fit the width, and that nothing a
// server says can drive the user's terminal.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/shared/io.js';
import { isolatedEnv, plain, runCli } from '../helpers/cli.js';
import { useEmulator } from '../helpers/emulator.js';

// eslint-disable-next-line no-control-regex
const SGR = /\x1b\[[0-9;]*m/;
// Anything a terminal would act on: ESC, BEL, backspace, C1 controls and the other C0 controls but tab and newline.
// eslint-disable-next-line no-control-regex
const ACTIVE = /[\x00-\x08\x0b-\x1f\x7f-\x9f]/;

async function serve(body: (path: string) => unknown) {
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(body(req.url!)));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

describe('colour', () => {
  const fx = useEmulator();

  // An error line on stderr shows the rules for any stream, piped or not; `error` is red when colour is on.
  const coloured = async (args: string[], extra: Env, tty: boolean) => {
    const r = await runCli(['lobby', 'logs', 'x', ...args], { env: { ...fx.env, ...extra }, tty });
    expect(r.code).toBe(2);
    expect(plain(r.stderr)).toBe('error: the lobby id must be a UUID, not "x"\n');
    return SGR.test(r.stderr);
  };

  it.each<[string, string[], Env, boolean, boolean]>([
    ['on in a terminal', [], {}, true, true],
    ['off when piped', [], {}, false, false],
    ['off with NO_COLOR', [], { NO_COLOR: '1' }, true, false],
    ['on with an empty NO_COLOR', [], { NO_COLOR: '' }, true, true],
    ['off with TERM=dumb', [], { TERM: 'dumb' }, true, false],
    ['off with --no-color', ['--no-color'], {}, true, false],
    ['forced with FORCE_COLOR, even piped', [], { FORCE_COLOR: '1' }, false, true],
    ['off with FORCE_COLOR=0', [], { FORCE_COLOR: '0' }, true, false],
    ['--no-color beats FORCE_COLOR', ['--no-color'], { FORCE_COLOR: '1' }, false, false],
    ['off in CI logs (piped)', [], { CI: 'true', BUILDKITE: 'true' }, false, false],
    ['on in CI when the pipeline forces it', [], { CI: 'true', FORCE_COLOR: '1' }, false, true],
  ])('%s', async (_name, args, extra, tty, expected) => {
    expect(await coloured(args, extra, tty)).toBe(expected);
  });

  it('data on a terminal stdout is coloured by the same rules', async () => {
    const on = await runCli(['stats'], { env: fx.env, tty: true });
    expect(on.stdout).toMatch(SGR);
    expect(plain(on.stdout)).toContain('Players in game: 0');
    for (const extra of [{ NO_COLOR: '1' }, { TERM: 'dumb' }]) {
      const off = await runCli(['stats'], { env: { ...fx.env, ...extra }, tty: true });
      expect(off.stdout).not.toMatch(SGR);
      expect(off.stdout).toContain('Players in game: 0');
    }
  });

  it('the error line keeps its exact colour codes', async () => {
    const tty = await runCli(['lobby', 'logs', 'x'], { env: fx.env, tty: true });
    expect(tty.stderr).toBe('\x1b[31merror\x1b[39m: the lobby id must be a UUID, not "x"\n');
  });
});

describe('tables and records', () => {
  const longStats = {
    player_count: 12,
    game_modes: {
      'capture-the-flag-with-a-very-long-game-mode-name': { player_count: 12, regions: { 'lnd-atl-a-region-with-a-long-name-too': { player_count: 12 } } },
    },
  };

  it('fit the terminal width, cut with … rather than wrapped', async () => {
    const srv = await serve(() => longStats);
    try {
      for (const columns of [30, 40, 60]) {
        const r = await runCli(['stats', '--no-color'], { env: { ...isolatedEnv(), GAMEHOST_ENDPOINT: srv.endpoint }, tty: true, columns });
        expect(r.code).toBe(0);
        for (const line of r.stdout.split('\n')) expect(Array.from(line).length).toBeLessThan(columns);
        expect(r.stdout).toContain('…');
      }
      const wide = await runCli(['stats', '--no-color'], { env: { ...isolatedEnv(), GAMEHOST_ENDPOINT: srv.endpoint }, tty: true, columns: 200 });
      expect(wide.stdout).toContain('lnd-atl-a-region-with-a-long-name-too');
    } finally {
      await srv.close();
    }
  });

  it('piped, they are whole tab-separated rows with no header and no colour', async () => {
    const srv = await serve(() => longStats);
    try {
      const r = await runCli(['stats'], { env: { ...isolatedEnv(), GAMEHOST_ENDPOINT: srv.endpoint, FORCE_COLOR: '0' }, columns: 20 });
      expect(r.stdout).toBe('capture-the-flag-with-a-very-long-game-mode-name\tlnd-atl-a-region-with-a-long-name-too\t12\n');
    } finally {
      await srv.close();
    }
  });

  describe('strings from a hostile server are neutralised', () => {
    const evil = 'dust\x1b[2J\x1b]0;owned\x07\x1b[31m\x9b5n\x07\x08';
    let srv: Awaited<ReturnType<typeof serve>>;
    beforeAll(async () => {
      srv = await serve((path) =>
        path.startsWith('/matchmaker/players/statistics')
          ? { player_count: 2, game_modes: { [evil]: { player_count: 2, regions: { [`${evil}-atl`]: { player_count: 2 } } } } }
          : {
              lobby: { lobby_id: '2f1c0000-0000-4000-8000-000000000000', region: { region_id: `${evil}-fra`, display_name: `Frankfurt${evil}` } },
              ports: { [`game${evil}`]: { hostname: `h${evil}.example`, port: 7777, is_tls: false } },
              player: { token: `jwt${evil}` },
            },
      );
    });
    afterAll(() => srv.close());

    it.each([
      ['a table in a terminal', ['stats'], true],
      ['table rows in a pipe', ['stats'], false],
      ['a record in a pipe', ['lobby', 'create', '--game-mode', 'default'], false],
    ])('%s', async (_name, args, tty) => {
      // Without our own colour, any escape left in the output would be the server's.
      const r = await runCli(args, { env: { ...isolatedEnv(), GAMEHOST_ENDPOINT: srv.endpoint, NO_COLOR: '1' }, tty, columns: 200 });
      expect(r.code).toBe(0);
      expect(r.stdout).not.toMatch(ACTIVE);
      expect(r.stdout).toContain('dust');
      expect(r.stdout).not.toContain('owned\x07');
    });
  });
});
