// A cloud token alone is enough for lobby create and stats: the CLI makes a public namespace token with it through
// the service's own operation, keeps it for the next commands, and replaces it once when the service refuses it.
// Against the real emulator, behind a front that counts how many tokens were made.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { frontOf, startTestEmulator } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';


describe('a namespace token made with the cloud token', () => {
  let emu: Awaited<ReturnType<typeof startTestEmulator>>;
  let front: Awaited<ReturnType<typeof frontOf>>;
  let made = 0;
  beforeAll(async () => {
    emu = await startTestEmulator();
    front = await frontOf(emu.endpoint, (req) => {
      if (req.method === 'POST' && /\/namespaces\/[^/]+\/tokens\/public$/.test(req.url ?? '')) made++;
      return false;
    });
  });
  afterAll(async () => {
    front.close();
    await emu.close();
  });

  const cloudOnly = () => ({ ...isolatedEnv(), GAMEHOST_ENDPOINT: front.endpoint, GAMEHOST_TOKEN: emu.tokens.cloud, GAMEHOST_GAME: emu.gameId, GAMEHOST_NAMESPACE: emu.namespaceId });
  const keptFile = (env: Record<string, string | undefined>) => path.join(env.XDG_STATE_HOME!, 'gamehost', 'namespace-tokens.json');

  it('stats and lobby create work; one token is made, said once, kept 0600, and reused by the next command', async () => {
    const env = cloudOnly();
    made = 0;
    const stats = await runCli(['stats', '--json'], { env });
    expect([stats.code, JSON.parse(stats.stdout).player_count]).toEqual([0, 0]);
    expect(stats.stderr).toBe(
      `Made a public namespace token with the cloud token (the matchmaker refuses cloud tokens); kept in ${keptFile(env)} for the next commands.\n`,
    );
    expect(made).toBe(1);
    const file = keptFile(env);
    expect(fs.statSync(file).mode & 0o777).toBe(0o600);
    expect(fs.statSync(path.dirname(file)).mode & 0o777).toBe(0o700);
    const kept = fs.readFileSync(file, 'utf8');
    expect(kept).toContain(emu.tokens.public);

    const lobby = await runCli(['lobby', 'create', '--game-mode', 'default', '--json'], { env });
    expect(lobby.code, lobby.stderr).toBe(0);
    expect(JSON.parse(lobby.stdout).lobby.lobby_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(lobby.stderr).toBe('');
    expect(made).toBe(1);
    expect(fs.readFileSync(file, 'utf8')).toBe(kept);
  });

  it('a kept token the service refuses is replaced once, and the command goes on', async () => {
    const env = cloudOnly();
    made = 0;
    expect((await runCli(['stats'], { env })).code).toBe(0);
    const file = keptFile(env);
    // As after `emulator reset`: the kept token's signature is no longer the service's.
    const revoked = emu.tokens.public.replace(/\.[^.]+$/, '.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA');
    fs.writeFileSync(file, fs.readFileSync(file, 'utf8').replace(emu.tokens.public, revoked));
    const r = await runCli(['lobby', 'create', '--game-mode', 'default', '--json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toBe(
      `The kept namespace token was refused (401 API_UNAUTHORIZED); made a public namespace token with the cloud token (the matchmaker refuses cloud tokens); kept in ${file} for the next commands.\n`,
    );
    expect(made).toBe(2);
    expect(fs.readFileSync(file, 'utf8')).toContain(emu.tokens.public);
    expect((await runCli(['stats'], { env })).code).toBe(0);
    expect(made).toBe(2);
  });

  it('an unknown namespace: the service\'s 404 to making the token, exit 4, asked once', async () => {
    const env = { ...cloudOnly(), GAMEHOST_NAMESPACE: '12345678-1234-4234-8234-123456789abc' };
    made = 0;
    const r = await runCli(['stats'], { env });
    expect(r.code).toBe(4);
    expect(r.stderr).toMatch(/^error: Namespace 12345678-1234-4234-8234-123456789abc not found\./);
    expect(made).toBe(1);
  });

  it('without the game and namespace ids there is nothing to make one with: exit 2 before any request', async () => {
    made = 0;
    const r = await runCli(['stats'], { env: { ...cloudOnly(), GAMEHOST_GAME: undefined } });
    expect([r.code, r.stderr]).toEqual([
      2,
      'error: no namespace token, and no game and namespace ids to make one with the cloud token\n  pass --namespace-token (or set GAMEHOST_NAMESPACE_TOKEN), or give --game <id> and --namespace <id>\n',
    ]);
    expect(made).toBe(0);
  });

  it('a profile saved with the cloud token alone works for lobby create and stats; profile show says what happens', async () => {
    const env = isolatedEnv();
    made = 0;
    const login = await runCli(['login', '--endpoint', front.endpoint, '--game', emu.gameId, '--namespace', emu.namespaceId, '--token-stdin'], { env, stdin: emu.tokens.cloud + '\n' });
    expect(login.code, login.stderr).toBe(0);
    expect((await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env })).code).toBe(0);
    expect((await runCli(['stats', '-q'], { env })).code).toBe(0);
    expect(made).toBe(1);
    const show = await runCli(['profile', 'show'], { env: { ...env, NO_COLOR: '1' }, tty: true });
    expect(show.stdout).toMatch(/^Namespace token +- \(made with the cloud token when needed\)$/m);
  });
});

describe('emulator serve', () => {
  it('prints a Try: line that works as printed, with the cloud token', async () => {
    const env = isolatedEnv();
    const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--data-dir', path.join(tempDir(), 'data')], {
      env: { PATH: process.env.PATH, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    // Waited for after the stop: the serve writes its data directory (the store's close) until it exits, and the
    // directory is removed when the file ends.
    const exited = new Promise((resolve) => child.once('exit', resolve));
    try {
      const out: string[] = [];
      readline.createInterface({ input: child.stdout! }).on('line', (l) => out.push(l));
      const err = readline.createInterface({ input: child.stderr! });
      const lines: string[] = [];
      await new Promise<void>((resolve) => err.on('line', (l) => (lines.push(l), /Ctrl-C/.test(l) && resolve())));
      const tryLine = lines[lines.findIndex((l) => l.endsWith('Try:')) + 1]!;
      const cloud = out.find((l) => l.startsWith('cloud_token'))!.split('\t')[1]!;
      const vars = Object.fromEntries(
        [...tryLine.replace('<cloud token>', cloud).matchAll(/(GAMEHOST_\w+)=(\S+)/g)].map((m) => [m[1]!, m[2]!]),
      );
      expect(Object.keys(vars).sort()).toEqual(['GAMEHOST_ENDPOINT', 'GAMEHOST_GAME', 'GAMEHOST_NAMESPACE', 'GAMEHOST_TOKEN']);
      expect(tryLine).toMatch(/ gamehost stats$/);
      const r = await runCli(['stats', '--json'], { env: { ...isolatedEnv(), ...vars } });
      expect(r.code, r.stderr).toBe(0);
      expect(JSON.parse(r.stdout).player_count).toBe(0);
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });
});
