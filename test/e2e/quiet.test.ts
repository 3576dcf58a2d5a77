// What a script gets: -q prints the one thing it wants from each command and nothing on stderr; serve --env prints
// lines for a shell; ids stay whole in every table, with --wide for all the columns; version and -V.
import fs from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import { InterruptedError } from '../../src/errors.js';
import { Capture, isolatedEnv, plain, runCli, tempDir } from '../helpers/cli.js';
import { useEmulator } from '../helpers/emulator.js';
import { version } from '../../src/version.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('-q', () => {
  const fx = useEmulator();

  it('lobby create -q: the lobby id alone, nothing on stderr, on a terminal too', async () => {
    for (const tty of [false, true]) {
      const r = await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env: fx.env, tty });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^[0-9a-f-]{36}\n$/);
      expect(r.stdout.trim()).toMatch(UUID);
      expect(r.stderr).toBe('');
    }
  });

  it('emulator lobby stop -q: the lobby id; stopping twice says the first stop stays (and -q keeps it quiet)', async () => {
    const id = (await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env: fx.env })).stdout.trim();
    const first = await runCli(['emulator', 'lobby', 'stop', id, '--exit-code', '2', '-q'], { env: fx.env });
    expect([first.code, first.stdout, first.stderr]).toEqual([0, `${id}\n`, '']);
    const again = await runCli(['emulator', 'lobby', 'stop', id, '--exit-code', '0'], { env: fx.env });
    expect(again.code).toBe(0);
    expect(again.stderr).toMatch(new RegExp(`^lobby ${id} had already stopped at \\S+ with exit code 2; it keeps that stop: this stop changed nothing\\n$`));
    const quiet = await runCli(['emulator', 'lobby', 'stop', id, '-q'], { env: fx.env });
    expect([quiet.stdout, quiet.stderr]).toEqual([`${id}\n`, '']);
  });

  it('build push -q: the build id; emulator builds -q: the ids, newest first', async () => {
    const dir = tempDir();
    const ids: string[] = [];
    for (const tag of ['q:one', 'q:two']) {
      const file = path.join(dir, `${tag.replace(':', '-')}.tar`);
      fs.writeFileSync(file, Buffer.alloc(2048, tag.length));
      const r = await runCli(['build', 'push', file, '--tag', tag, '-q'], { env: fx.env, cwd: dir });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^\S+\n$/);
      expect(r.stderr).toBe('');
      ids.push(r.stdout.trim());
    }
    const listed = await runCli(['emulator', 'builds', '-q'], { env: fx.env });
    expect(listed.stdout.trim().split('\n').slice(0, 2)).toEqual([...ids].reverse());
  });

  it('history export -q: the path of the file written', async () => {
    const dir = tempDir();
    const r = await runCli(['history', 'export', '--since', '1h', '-o', 'h.csv', '-q'], { env: fx.env, cwd: dir });
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${path.join(dir, 'h.csv')}\n`);
    expect(r.stderr).toBe('');
  });
});

describe('ids are never cut', () => {
  const fx = useEmulator();

  it('emulator builds at 60 columns: the whole build id and tag, other columns left out and counted; --wide shows them', async () => {
    const dir = tempDir();
    const file = path.join(dir, 'server.tar');
    fs.writeFileSync(file, Buffer.alloc(1000, 1));
    const id = (await runCli(['build', 'push', file, '--tag', 'game-server:narrow', '--name', 'A rather long display name', '-q'], { env: fx.env })).stdout.trim();
    const narrow = plain((await runCli(['emulator', 'builds'], { env: fx.env, tty: true, columns: 60 })).stdout);
    const row = narrow.split('\n').find((l) => l.startsWith(id));
    // The tag whole beside the id (never `game-…`); the rest left out and counted.
    expect(row, narrow).toBe(`${id}  game-server:narrow`);
    for (const line of narrow.trimEnd().split('\n')) expect([...line].length).toBeLessThanOrEqual(59);
    expect(narrow).toMatch(/\n5 columns left out: --wide shows them\n$/);
    const wide = plain((await runCli(['emulator', 'builds', '--wide'], { env: fx.env, tty: true, columns: 60 })).stdout);
    expect(wide).toMatch(/BUILD +TAG +NAME +SIZE +STATE +CREATED +SHA-256/);
    expect(wide).toContain('A rather long display name');
    expect(wide).not.toContain('left out');
  });

  // What a person picks a profile by is its name and endpoint: both whole at any width; the ids go first.
  const PROFILES_40 = [
    '   NAME        ENDPOINT',
    '*  default     https://api.example.com',
    '   staging-eu  https://staging-eu.games.example.net',
    '3 columns left out: --wide shows them',
  ];
  const PROFILES_80 = [
    '   NAME        ENDPOINT                              TOKENS',
    '*  default     https://api.example.com               cloud',
    '   staging-eu  https://staging-eu.games.example.net  cloud+namespace',
    'GAME, NAMESPACE left out to fit: --wide shows them',
  ];
  const PROFILES_120 = [
    '   NAME        ENDPOINT                              GAME                                  TOKENS',
    '*  default     https://api.example.com               6b1f4a2e-1111-4222-8333-444455556666  cloud',
    '   staging-eu  https://staging-eu.games.example.net  6b1f4a2e-1111-4222-8333-444455556666  cloud+namespace',
    'NAMESPACE left out to fit: --wide shows it',
  ];

  it.each([
    [40, PROFILES_40],
    [80, PROFILES_80],
    [120, PROFILES_120],
  ])('profile list at %i columns: names and endpoints whole, never cut; the ids left out before them', async (columns, expected) => {
    const env = isolatedEnv();
    const game = '6b1f4a2e-1111-4222-8333-444455556666';
    const ns = '0c9d8e7f-aaaa-4bbb-8ccc-ddddeeeeffff';
    for (const [profile, endpoint, extra] of [
      ['default', 'https://api.example.com', []],
      ['staging-eu', 'https://staging-eu.games.example.net', ['--namespace-token-stdin']],
    ] as const) {
      const login = await runCli(['login', '--profile', profile, '--endpoint', endpoint, '--game', game, '--namespace', ns, '--token-stdin', ...extra, '--no-input'], {
        env,
        stdin: extra.length ? 'cloud.token\npub.token\n' : 'cloud.token\n',
      });
      expect(login.code, login.stderr).toBe(0);
    }
    const r = plain((await runCli(['profile', 'list'], { env, tty: true, columns })).stdout);
    expect(r).toBe(expected.join('\n') + '\n');
    expect(r).not.toContain('…');
    const wide = plain((await runCli(['profile', 'list', '--wide'], { env, tty: true, columns })).stdout);
    expect(wide.split('\n')[0]).toMatch(/^ +NAME +ENDPOINT +GAME +NAMESPACE +TOKENS$/);
    expect(wide).toContain(ns);
    expect((await runCli(['profile', 'list', '-q'], { env })).stdout).toBe('default\nstaging-eu\n');
  });
});

describe('emulator serve --env', () => {
  it('prints export lines a shell can source, then serves until interrupted', async () => {
    const controller = new AbortController();
    const dir = tempDir();
    // Stops the server once its lines are out: what a person does with Ctrl-C.
    class Interrupting extends Capture {
      override _write(chunk: Buffer | string, enc: BufferEncoding, cb: () => void): void {
        super._write(chunk, enc, cb);
        controller.abort(new InterruptedError('SIGINT'));
      }
    }
    const stdout = new Interrupting(false, 80);
    const stderr = new Capture(false, 80);
    const stdin = new PassThrough();
    stdin.end();
    const code = await main(['node', 'gamehost', 'emulator', 'serve', '--port', '0', '--data-dir', path.join(dir, 'data'), '--env'], {
      io: { stdout, stderr, stdin },
      env: isolatedEnv(),
      signal: controller.signal,
    });
    expect(code).toBe(0);
    const lines = stdout.text.trim().split('\n');
    expect(lines.map((l) => l.split('=')[0])).toEqual([
      '# stores: records sqlite, bytes local',
      'export GAMEHOST_ENDPOINT',
      'export GAMEHOST_TOKEN',
      'export GAMEHOST_NAMESPACE_TOKEN',
      'export GAMEHOST_GAME',
      'export GAMEHOST_NAMESPACE',
    ]);
    expect(lines[1]).toMatch(/^export GAMEHOST_ENDPOINT=http:\/\/127\.0\.0\.1:\d+$/);
    expect(stderr.text).toMatch(/Press Ctrl-C to stop/);
  });

  it('--env with --json is a usage error', async () => {
    const r = await runCli(['emulator', 'serve', '--env', '--json'], { env: isolatedEnv() });
    expect([r.code, r.stderr]).toEqual([2, 'error: give either --env or --json, not both\n']);
  });
});

describe('version', () => {
  it.each([[['version']], [['-V']], [['--version']]])('%s prints the version', async (args) => {
    const r = await runCli(args);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, `${version}\n`, '']);
  });

  it.each([[['--version', '--json']], [['-V', '--json']], [['--json', '-V']]])('%s prints what version --json prints', async (args) => {
    const expected = await runCli(['version', '--json']);
    expect(JSON.parse(expected.stdout)).toMatchObject({ version, node: process.versions.node });
    const r = await runCli(args);
    expect([r.code, r.stdout, r.stderr]).toEqual([0, expected.stdout, '']);
  });
});
