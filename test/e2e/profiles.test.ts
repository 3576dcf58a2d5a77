// Profiles, login and logout as a user meets them: what is stored where, with which mode, what is printed, and
// which value wins when flags, environment and a profile disagree.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli.js';
import type { Env } from '../../src/shared/io.js';
import { FAST_RETRY, isolatedEnv, plain, runCli } from '../helpers/cli.js';
import { startTestEmulator } from '../helpers/emulator.js';

type Emulator = Awaited<ReturnType<typeof startTestEmulator>>;

const configPath = (env: Env) => path.join(env.XDG_CONFIG_HOME!, 'gamehost', 'config.json');
const readConfig = (env: Env) => JSON.parse(fs.readFileSync(configPath(env), 'utf8'));
const mode = (file: string) => fs.statSync(file).mode & 0o777;

/** Logs in through stdin, as a script would: the cloud token, then the namespace token, one a line. */
function login(env: Env, emu: Emulator, args: string[] = []) {
  return runCli(['login', '--endpoint', emu.endpoint, '--game', emu.gameId, '--namespace', emu.namespaceId, '--token-stdin', '--namespace-token-stdin', ...args], {
    env,
    stdin: `${emu.tokens.cloud}\n${emu.tokens.public}\n`,
  });
}

/** A bare server that records each request's path and Authorization header and answers like statistics. */
async function recordingServer() {
  const seen: { url: string; auth?: string }[] = [];
  const server = http.createServer((req, res) => {
    seen.push({ url: req.url!, auth: req.headers.authorization });
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ player_count: 0, game_modes: {} }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { seen, endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

describe('login, profile and logout', () => {
  let emu: Emulator;
  beforeAll(async () => {
    emu = await startTestEmulator();
  });
  afterAll(() => emu.close());

  it('login --token-stdin saves the profile 0600 in a 0700 directory and prints no token', async () => {
    const env = isolatedEnv();
    const r = await login(env, emu);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`Saved profile "default" for ${emu.endpoint} in ${configPath(env)}.`);
    expect(r.stderr).toContain('It is now the current profile.');
    expect(r.stderr).not.toContain(emu.tokens.cloud);
    expect(mode(configPath(env))).toBe(0o600);
    expect(mode(path.dirname(configPath(env)))).toBe(0o700);
    expect(readConfig(env)).toEqual({
      current: 'default',
      profiles: {
        default: { endpoint: emu.endpoint, token: emu.tokens.cloud, namespace_token: emu.tokens.public, game: emu.gameId, namespace: emu.namespaceId },
      },
    });
  });

  it('profile show and list print tokens redacted, for people and for scripts', async () => {
    const env = isolatedEnv();
    await login(env, emu);
    const cloud = emu.tokens.cloud;
    const redacted = `cloud.${cloud.slice(6, 9)}…${cloud.slice(-3)}`;

    const show = await runCli(['profile', 'show'], { env });
    expect(show.code).toBe(0);
    expect(show.stdout).toContain(`token\t${redacted}\n`);
    expect(show.stdout).toContain(`endpoint\t${emu.endpoint}\n`);
    expect(show.stdout).toContain('current\ttrue\n');
    const tty = await runCli(['profile', 'show'], { env, tty: true });
    expect(plain(tty.stdout)).toMatch(new RegExp(`Cloud token +${redacted.replace('.', '\\.')}\n`));
    expect(plain(tty.stdout)).toMatch(/Profile +default \(current\)/);
    const json = JSON.parse((await runCli(['profile', 'show', '--json'], { env })).stdout);
    expect(json).toMatchObject({ name: 'default', current: true, endpoint: emu.endpoint, token: redacted, game: emu.gameId });

    const list = await runCli(['profile', 'list'], { env });
    expect(list.stdout).toBe(`default\t${emu.endpoint}\t${emu.gameId}\t${emu.namespaceId}\tcloud+namespace\tcurrent\n`);
    const listJson = JSON.parse((await runCli(['profile', 'list', '--json'], { env })).stdout);
    expect(listJson.profiles[0]).toMatchObject({ name: 'default', current: true, token: redacted });

    for (const r of [show, tty, list]) {
      for (const t of Object.values(emu.tokens)) expect(r.stdout + r.stderr).not.toContain(t);
    }
  });

  it('a second profile does not take over; profile use switches; logout removes it and its tokens', async () => {
    const env = isolatedEnv();
    await login(env, emu);
    const second = await login(env, emu, ['--profile', 'staging']);
    expect(second.stderr).toContain('The current profile is still "default": run `gamehost profile use staging`, or pass --profile staging.');
    expect(readConfig(env).current).toBe('default');

    const use = await runCli(['profile', 'use', 'staging'], { env });
    expect(use.code).toBe(0);
    expect(use.stderr).toBe(`Now using profile "staging" (${emu.endpoint}).\n`);
    expect(readConfig(env).current).toBe('staging');

    const missing = await runCli(['profile', 'use', 'prod'], { env });
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe('error: no profile "prod"\n  the profiles are: default, staging\n');

    const out = await runCli(['logout'], { env });
    expect(out.code).toBe(0);
    expect(out.stderr).toContain(`Removed profile "staging" and its tokens from ${configPath(env)}.`);
    expect(out.stderr).toContain('No profile is current now: pick one with `gamehost profile use <name>` (default).');
    expect(readConfig(env)).toEqual({ profiles: { default: expect.any(Object) } });
    expect(mode(configPath(env))).toBe(0o600);

    const again = await runCli(['logout', '--profile', 'staging'], { env });
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('no profile "staging"');
  });

  it('--json: login, profile use and logout each print one JSON document, tokens redacted', async () => {
    const env = isolatedEnv();
    const loggedIn = await login(env, emu, ['--json']);
    expect(loggedIn.stderr).toBe('');
    expect(JSON.parse(loggedIn.stdout)).toEqual({
      profile: 'default',
      endpoint: emu.endpoint,
      game: emu.gameId,
      namespace: emu.namespaceId,
      token: expect.stringMatching(/^cloud\.\w{3}…[\w-]{3}$/),
      namespace_token: expect.stringMatching(/^pub_[0-9a-z_-]+\.\w{3}…[\w-]{3}$/),
      current: true,
      config_file: configPath(env),
    });
    expect(JSON.parse((await runCli(['profile', 'use', 'default', '--json'], { env })).stdout)).toEqual({ current: 'default', endpoint: emu.endpoint });
    const out = await runCli(['logout', '--json'], { env });
    expect(JSON.parse(out.stdout)).toEqual({ profile: 'default', removed: true, current: null });
    expect(out.stderr).toBe('');
  });

  it('warns when the config file with tokens is readable by others, and login narrows it again', async () => {
    const env = isolatedEnv();
    await login(env, emu);
    fs.chmodSync(configPath(env), 0o644);
    const list = await runCli(['profile', 'list'], { env });
    expect(list.code).toBe(0);
    expect(list.stderr).toBe(`warning: ${configPath(env)} holds tokens and other users can read it (mode 0644); run: chmod 600 ${configPath(env)}\n`);
    // Every command that reads the profile warns, once.
    const stats = await runCli(['stats'], { env });
    expect(stats.code).toBe(0);
    expect(stats.stderr.match(/other users can read it/g)).toHaveLength(1);

    await login(env, emu);
    expect(mode(configPath(env))).toBe(0o600);
    expect((await runCli(['profile', 'list'], { env })).stderr).toBe('');
  });

  it('a hand-broken config file is a usage error naming the file', async () => {
    const env = isolatedEnv();
    fs.mkdirSync(path.dirname(configPath(env)), { recursive: true });
    fs.writeFileSync(configPath(env), '{"profiles": {', { mode: 0o600 });
    const r = await runCli(['stats'], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^error: ${configPath(env).replace(/[.]/g, '\\.')} is not valid JSON \\(.+\\)\n  fix it, or remove it and run \`gamehost login\` again\n$`));
  });

  describe('login input', () => {
    it('--no-input forbids the prompt and names the flag to pass (exit 2)', async () => {
      const r = await runCli(['login', '--no-input'], { env: isolatedEnv() });
      expect(r.code).toBe(2);
      expect(r.stderr).toBe('error: login would need a prompt, and --no-input forbids prompts\n  pass --token-stdin (and --namespace-token-stdin) with the tokens piped in, one a line\n');
    });

    it('without a terminal on stdin there is no prompt either', async () => {
      const r = await runCli(['login'], { env: isolatedEnv() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('login would need a prompt, and stdin is not a terminal');
      expect(r.stderr).toContain('pass --token-stdin');
    });

    it('refuses tokens given as flags, which would land in shell history', async () => {
      const r = await runCli(['login', '--token', 'cloud.secret-value-here', '--token-stdin'], { env: isolatedEnv() });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('login does not take tokens as flags');
      expect(r.stderr).not.toContain('cloud.secret-value-here');
    });

    it('stdin must hold exactly the tokens asked for', async () => {
      const env = isolatedEnv();
      const extra = await runCli(['login', '--token-stdin'], { env, stdin: 'cloud.aaa\npub_x.bbb\n' });
      expect(extra.code).toBe(2);
      expect(extra.stderr).toBe('error: stdin holds 2 lines; expected the cloud token, one a line\n');
      const none = await runCli(['login', '--token-stdin', '--namespace-token-stdin'], { env, stdin: '' });
      expect(none.stderr).toBe('error: stdin holds 0 lines; expected the cloud token, then the namespace token, one a line\n');
      expect(fs.existsSync(configPath(env))).toBe(false);
    });

    it('a namespace token alone is enough for the matchmaker commands', async () => {
      const env = isolatedEnv();
      const r = await runCli(['login', '--endpoint', emu.endpoint, '--namespace-token-stdin'], { env, stdin: emu.tokens.public + '\n' });
      expect(r.code).toBe(0);
      expect(readConfig(env).profiles.default).toEqual({ endpoint: emu.endpoint, namespace_token: emu.tokens.public });
      const stats = await runCli(['stats', '--json'], { env });
      expect(stats.code).toBe(0);
      expect(JSON.parse(stats.stdout).player_count).toBe(0);
    });

    it('login defaults to the production endpoint and normalises what it is given', async () => {
      const env = isolatedEnv();
      await runCli(['login', '--token-stdin'], { env, stdin: 'cloud.aaaaaaaaaaaaaaaa.bbbbbbbbbbbbbbbb\n' });
      expect(readConfig(env).profiles.default.endpoint).toBe('https://api.rivet.gg');
      await runCli(['login', '--profile', 'local', '--endpoint', '127.0.0.1:6420/', '--token-stdin'], { env, stdin: 'cloud.x\n' });
      expect(readConfig(env).profiles.local.endpoint).toBe('http://127.0.0.1:6420');
      const plain = await runCli(['login', '--endpoint', 'http://10.1.2.3', '--token-stdin'], { env, stdin: 'cloud.x\n' });
      expect(plain.code).toBe(2);
      expect(plain.stderr).toContain('refusing plain-http endpoint 10.1.2.3');
    });

    it('saves nothing that is not an endpoint or an id', async () => {
      const env = isolatedEnv();
      for (const [args, message] of [
        [['--endpoint', 'ht!tp://::'], 'error: --endpoint is not a valid URL: ht!tp://:: ("ht!tp" is not a scheme)\n'],
        [['--game', 'mygame'], 'error: --game must be a UUID, not "mygame"\n'],
        // A name id (prod) is looked up with the cloud token (test/e2e/login-discover.test.ts); this is neither.
        [['--namespace', 'no/such'], 'error: --namespace must be a namespace\'s name id (such as prod) or its UUID, not "no/such"\n'],
      ] as const) {
        const r = await runCli(['login', ...args, '--token-stdin'], { env, stdin: 'cloud.x\n' });
        expect([r.code, r.stderr.split('\n')[0] + '\n']).toEqual([2, message]);
      }
      expect(fs.existsSync(path.join(env.XDG_CONFIG_HOME!, 'gamehost', 'config.json'))).toBe(false);
    });
  });

  describe('the hidden prompt on a terminal', () => {
    class TerminalIn extends PassThrough {
      readonly isTTY = true;
      readonly rawModes: boolean[] = [];
      setRawMode(mode: boolean) {
        this.rawModes.push(mode);
        return this;
      }
    }
    class Capture extends Writable {
      text = '';
      readonly isTTY = true;
      override _write(chunk: Buffer, _e: BufferEncoding, cb: () => void) {
        this.text += chunk.toString();
        cb();
      }
    }
    /** Types `keys` one at a time once each prompt is on screen, as a person would. */
    async function typed(args: string[], env: Env, keys: string[]) {
      const stdin = new TerminalIn();
      const stdout = new Capture();
      const stderr = new Capture();
      const done = main(['node', 'gamehost', ...args], { io: { stdin, stdout, stderr }, env, retry: FAST_RETRY, signal: new AbortController().signal });
      for (const key of keys) {
        await new Promise((r) => setTimeout(r, 5));
        stdin.write(key);
      }
      return { code: await done, stdout: stdout.text, stderr: stderr.text, stdin };
    }

    it('asks for both tokens without echoing them, in raw mode, and saves them', async () => {
      const env = isolatedEnv();
      const keys = [`${emu.tokens.cloud}x`, '\x7f', '\r', emu.tokens.public, '\r'];
      const r = await typed(['login', '--endpoint', emu.endpoint, '--game', emu.gameId], env, keys);
      expect(r.code).toBe(0);
      expect(r.stderr).toContain(`Cloud token for ${emu.endpoint} (Enter to skip): \nNamespace token (Enter to have one made with the cloud token): \n`);
      for (const t of Object.values(emu.tokens)) expect(r.stderr + r.stdout).not.toContain(t);
      expect(r.stdin.rawModes).toEqual([true, false]);
      // Backspace took the stray "x" back.
      expect(readConfig(env).profiles.default).toMatchObject({ token: emu.tokens.cloud, namespace_token: emu.tokens.public });
    });

    it('Ctrl-C at the prompt stops with exit 130 and saves nothing', async () => {
      const env = isolatedEnv();
      const r = await typed(['login', '--endpoint', emu.endpoint], env, ['c', 'l', '\x03']);
      expect(r.code).toBe(130);
      expect(r.stdin.rawModes).toEqual([true, false]);
      expect(fs.existsSync(configPath(env))).toBe(false);
    });

    it('--no-input wins even on a terminal', async () => {
      const r = await typed(['login', '--no-input'], isolatedEnv(), []);
      expect(r.code).toBe(2);
      expect(r.stdin.rawModes).toEqual([]);
    });
  });
});

describe('precedence: flag > environment > profile > embedded emulator', () => {
  let emu: Emulator;
  let env: Env;
  beforeAll(async () => {
    emu = await startTestEmulator();
    env = isolatedEnv();
    await login(env, emu, ['--profile', 'emu']);
  });
  afterAll(() => emu.close());

  it('the current profile is used when nothing else is given', async () => {
    const r = await runCli(['stats', '--verbose'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).not.toContain('local emulator');
    expect(r.stderr).toContain(`target ${emu.endpoint} (profile "emu"); cloud token cloud.`);
    expect(r.stderr).toMatch(/namespace token pub_[0-9a-z_-]+\.\w{3}…[\w-]{3} \(profile "emu"\); game [0-9a-f-]+ \(profile "emu"\)/);
  });

  it('the environment wins over the profile, value by value', async () => {
    const r = await runCli(['stats', '--verbose'], { env: { ...env, GAMEHOST_NAMESPACE_TOKEN: 'pub_x.bad.sig' } });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('namespace token pub_x.… (GAMEHOST_NAMESPACE_TOKEN)');
    expect(r.stderr).toContain(`target ${emu.endpoint} (profile "emu")`);
  });

  it('a flag wins over the environment', async () => {
    const r = await runCli(['stats', '--namespace-token', emu.tokens.public], { env: { ...env, GAMEHOST_NAMESPACE_TOKEN: 'pub_x.bad.sig' } });
    expect(r.code).toBe(0);
  });

  it('GAMEHOST_PROFILE and --profile pick a profile; an unknown one is a usage error', async () => {
    const byEnv = await runCli(['stats'], { env: { ...env, GAMEHOST_PROFILE: 'emu' } });
    expect(byEnv.code).toBe(0);
    const unknown = await runCli(['stats'], { env: { ...env, GAMEHOST_PROFILE: 'nope' } });
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toBe('error: GAMEHOST_PROFILE: no profile "nope"\n  the profiles are: emu\n');
    const flag = await runCli(['stats', '--profile', 'other'], { env: { ...env, GAMEHOST_PROFILE: 'emu' } });
    expect(flag.code).toBe(2);
    expect(flag.stderr).toContain('--profile: no profile "other"');
  });

  it('with no profile (or --no-profile) the embedded emulator answers', async () => {
    const r = await runCli(['stats', '--no-profile'], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('Using the local emulator');
    const fresh = await runCli(['stats'], { env: isolatedEnv() });
    expect(fresh.stderr).toContain('Using the local emulator');
  });

  it("a profile's tokens never go to another endpoint given by flag or environment", async () => {
    const other = await recordingServer();
    try {
      const r = await runCli(['stats', '--profile', 'emu'], { env: { ...env, GAMEHOST_ENDPOINT: other.endpoint } });
      expect(r.code).toBe(0);
      expect(r.stderr).toBe('warning: GAMEHOST_ENDPOINT overrides the endpoint of profile "emu", so its tokens and ids are not used\n');
      expect(other.seen).toEqual([{ url: '/matchmaker/players/statistics', auth: undefined }]);
      // Given its own endpoint, the profile applies.
      const same = await runCli(['stats', '--verbose'], { env: { ...env, GAMEHOST_ENDPOINT: emu.endpoint + '/' } });
      expect(same.code).toBe(0);
      expect(same.stderr).toContain(`target ${emu.endpoint} (GAMEHOST_ENDPOINT); cloud token cloud.`);
      expect(same.stderr).toContain('(profile "emu")');
    } finally {
      await other.close();
    }
  });

  it('profile show says which environment variables win over the profile', async () => {
    const r = await runCli(['profile', 'show'], { env: { ...env, GAMEHOST_TOKEN: 'cloud.x' } });
    expect(r.stderr).toBe("note: GAMEHOST_TOKEN is set, and wins over this profile's cloud token\n");
  });
});
