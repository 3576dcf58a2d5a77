// A shared staging emulator as CI jobs meet it, every process the real executable: `emulator serve` with an
// admin token, two jobs at once each with a game of its own (the same tag, lobbies, statistics), one game deleted
// while the other goes on; the admin guard; HTTPS with a private CA the CLI is given through NODE_EXTRA_CA_CERTS.
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startEmulator } from '../../src/emulator/index.js';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { admit } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

const ADMIN = 'staging-admin-token-0123456789abcdef';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** The executable as a CI step runs it: its own process, stdin closed, stdout and stderr piped. */
function gamehost(args: string[], env: Record<string, string | undefined>): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d));
    child.stderr.on('data', (d: Buffer) => (stderr += d));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

interface Served {
  child: ChildProcess;
  endpoint: string;
  stderr: () => string;
  stop(): Promise<number | null>;
}

async function serve(args: string[], env: Record<string, string | undefined>): Promise<Served> {
  const child = spawn(process.execPath, [BIN, 'emulator', 'serve', '--port', '0', '--json', ...args], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const line = await new Promise<string>((resolve, reject) => {
    readline.createInterface({ input: child.stdout! }).once('line', resolve);
    child.once('exit', (code) => reject(new Error(`serve exited ${code}: ${stderr}`)));
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    endpoint: JSON.parse(line).endpoint,
    stderr: () => stderr,
    async stop() {
      child.kill('SIGTERM');
      return exited;
    },
  };
}

/** `export NAME=value` lines as an environment. */
function exported(stdout: string): Record<string, string> {
  return Object.fromEntries([...stdout.matchAll(/^export (\w+)=(.*)$/gm)].map((m) => [m[1]!, m[2]!.replace(/^'(.*)'$/, '$1')]));
}

describe('one shared emulator, two CI jobs', () => {
  let server: Served;
  let admin: Record<string, string | undefined>;
  beforeAll(async () => {
    const home = isolatedEnv();
    server = await serve(['--data-dir', tempDir()], { ...home, GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN });
    admin = { ...home, GAMEHOST_ENDPOINT: server.endpoint, GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN };
  }, 60_000);
  afterAll(async () => {
    expect(await server.stop()).toBe(0);
    // The admin token is never printed or logged.
    expect(server.stderr()).not.toContain(ADMIN);
  }, 60_000);

  /** One job: its own game, the same tag as every other job, `lobbies` lobbies, then its statistics. */
  async function job(lobbies: number): Promise<{ env: Record<string, string | undefined>; stats: { player_count: number } }> {
    const created = await gamehost(['emulator', 'game', 'create', '--ttl', '1h', '--name', `job-${lobbies}`, '--env'], admin);
    expect(created.code).toBe(0);
    const vars = exported(created.stdout);
    expect(Object.keys(vars)).toEqual(['GAMEHOST_ENDPOINT', 'GAMEHOST_TOKEN', 'GAMEHOST_NAMESPACE_TOKEN', 'GAMEHOST_GAME', 'GAMEHOST_NAMESPACE']);
    // The job's steps see its game only, and not the admin token.
    const env = { ...isolatedEnv(), ...vars };
    const file = path.join(tempDir(), 'server.tar');
    fs.writeFileSync(file, Buffer.alloc(64 * 1024, lobbies));
    const pushed = await gamehost(['build', 'push', file, '--tag', 'game-server:ci', '--json'], env);
    expect(pushed.code).toBe(0);
    expect(JSON.parse(pushed.stdout).bytes).toBe(64 * 1024);
    await Promise.all(
      Array.from({ length: lobbies }, async () => {
        const created = await gamehost(['lobby', 'create', '--game-mode', 'default', '--json'], env);
        expect(created.code).toBe(0);
        // Its server admits the player: the statistics count connected players.
        await admit(server.endpoint, JSON.parse(created.stdout), ADMIN);
      }),
    );
    const stats = await gamehost(['stats', '--json'], env);
    expect(stats.code).toBe(0);
    return { env, stats: JSON.parse(stats.stdout) };
  }

  it('each job has its own game: the same tag pushed twice, statistics that never cross; one deleted, the other untouched', async () => {
    const [a, b] = await Promise.all([job(2), job(3)]);
    expect(a.stats.player_count).toBe(2);
    expect(b.stats.player_count).toBe(3);

    const listed = await gamehost(['emulator', 'game', 'list', '--json'], admin);
    const names = JSON.parse(listed.stdout).games.map((g: { name: string }) => g.name);
    expect(names).toEqual(expect.arrayContaining(['job-2', 'job-3']));

    const deleted = await gamehost(['emulator', 'game', 'delete', a.env.GAMEHOST_GAME!], admin);
    expect(deleted.code).toBe(0);
    expect(deleted.stderr).toBe(`Deleted game ${a.env.GAMEHOST_GAME}: 2 lobbies, 2 players, 1 build, 0 exports.\n`);

    // The deleted game's tokens: 401, exit 3, for every kind of call.
    for (const args of [['stats'], ['lobby', 'create', '--game-mode', 'default'], ['history', 'export', '--since', '1h']]) {
      const r = await gamehost(args, a.env);
      expect(r.code).toBe(3);
      expect(r.stderr).toMatch(/deleted or has expired/);
    }
    const again = await gamehost(['emulator', 'game', 'delete', a.env.GAMEHOST_GAME!], admin);
    expect(again.code).toBe(4);

    // The other job goes on as if nothing happened.
    const stats = await gamehost(['stats', '--json'], b.env);
    expect(JSON.parse(stats.stdout).player_count).toBe(3);
    const builds = await gamehost(['emulator', 'builds', '--json'], { ...b.env, GAMEHOST_EMULATOR_ADMIN_TOKEN: ADMIN });
    expect(JSON.parse(builds.stdout).builds).toMatchObject([{ image_tag: 'game-server:ci', complete: true }]);
    expect((await gamehost(['lobby', 'create', '--game-mode', 'default', '-q'], b.env)).code).toBe(0);
    // About twenty processes, each a second on a loaded 2-core machine.
  }, 90_000);

  it('in GitHub Actions, --env masks the tokens first and sets the variables in $GITHUB_ENV', async () => {
    const githubEnv = path.join(tempDir(), 'github_env');
    fs.writeFileSync(githubEnv, 'EARLIER=1\n');
    const r = await gamehost(['emulator', 'game', 'create', '--env'], { ...admin, GITHUB_ACTIONS: 'true', GITHUB_ENV: githubEnv });
    expect(r.code).toBe(0);
    const masks = r.stdout.trimEnd().split('\n');
    expect(masks).toHaveLength(3);
    for (const line of masks) expect(line).toMatch(/^::add-mask::\S+$/);
    const lines = fs.readFileSync(githubEnv, 'utf8').trimEnd().split('\n');
    expect(lines[0]).toBe('EARLIER=1');
    const vars = Object.fromEntries(lines.slice(1).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1)]));
    expect(Object.keys(vars)).toEqual(['GAMEHOST_ENDPOINT', 'GAMEHOST_TOKEN', 'GAMEHOST_NAMESPACE_TOKEN', 'GAMEHOST_GAME', 'GAMEHOST_NAMESPACE']);
    expect(masks).toContain(`::add-mask::${vars.GAMEHOST_TOKEN}`);
    expect(masks).toContain(`::add-mask::${vars.GAMEHOST_NAMESPACE_TOKEN}`);
    expect(r.stderr).toContain('set for the next steps');
    expect(fs.readFileSync(githubEnv, 'utf8')).not.toContain(ADMIN);
  }, 60_000);

  it('the admin routes: no token or a wrong one exits 3, the right one works; after 50 wrong tries, wrong ones are answered 429, the right one still works', async () => {
    const none = await gamehost(['emulator', 'game', 'list'], { ...admin, GAMEHOST_EMULATOR_ADMIN_TOKEN: undefined });
    expect(none.code).toBe(3);
    expect(none.stderr).toContain('Bearer <admin token>');
    const wrong = await gamehost(['emulator', 'game', 'create'], { ...admin, GAMEHOST_EMULATOR_ADMIN_TOKEN: 'wrong' });
    expect(wrong.code).toBe(3);
    expect(wrong.stderr).not.toContain('wrong\n');
    // The fix named is the admin token, not `gamehost login`, which never sets it.
    expect(wrong.stderr).toContain('set GAMEHOST_EMULATOR_ADMIN_TOKEN to the token the emulator was started with');
    expect(wrong.stderr).not.toContain('gamehost login');
    expect((await gamehost(['emulator', 'game', 'list', '-q'], admin)).code).toBe(0);

    // With the two wrong tries above, 50 in all.
    for (let i = 0; i < 48; i++) {
      const res = await fetch(`${server.endpoint}/_emulator/games`, { headers: { authorization: `Bearer guess-${i}` } });
      expect(res.status).toBe(401);
      expect(((await res.json()) as { code: string }).code).toBe('API_UNAUTHORIZED');
    }
    const locked = await fetch(`${server.endpoint}/_emulator/games`, { headers: { authorization: 'Bearer guess-again' } });
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await locked.json()) as { code: string }).code).toBe('API_RATE_LIMIT');
    expect((await gamehost(['emulator', 'game', 'list', '-q'], admin)).code).toBe(0);
    // Health is not behind the admin token (load balancers and container checks hold none).
    expect((await fetch(`${server.endpoint}/_emulator/health`)).status).toBe(200);
  }, 60_000);
});

describe('a game that expires', () => {
  it('its tokens exit 3 once the (injected) clock passes its expiry, and it leaves the list', async () => {
    const clock = new ManualClock(Date.UTC(2026, 0, 1));
    const emu = await startEmulator({ dataDir: tempDir(), clock, config: { startDelayMs: 0, readyDelayMs: 0 } });
    try {
      const env: Record<string, string | undefined> = { ...isolatedEnv(), GAMEHOST_ENDPOINT: emu.endpoint };
      const created = await runCli(['emulator', 'game', 'create', '--ttl', '10m', '--env'], { env });
      expect(created.code).toBe(0);
      const job = { ...env, ...exported(created.stdout) };
      const lobby = await runCli(['lobby', 'create', '--game-mode', 'default', '--json'], { env: job });
      expect(lobby.code).toBe(0);
      // Admitted by its server, the player is in game until the game expires.
      await admit(emu.endpoint, JSON.parse(lobby.stdout));
      clock.advance(10 * 60 * 1000 - 1);
      expect(JSON.parse((await runCli(['stats', '--json'], { env: job })).stdout).player_count).toBe(1);
      clock.advance(1);
      const expired = await runCli(['stats'], { env: job });
      expect(expired.code).toBe(3);
      expect(expired.stderr).toContain('the game of this token was deleted or has expired');
      const list = await runCli(['emulator', 'game', 'list', '-q'], { env });
      expect(list.stdout.trim().split('\n')).toEqual([emu.gameId]);
      expect((await runCli(['emulator', 'game', 'delete', job.GAMEHOST_GAME!], { env })).code).toBe(4);
    } finally {
      await emu.close();
    }
  }, 60_000);
});

describe('emulator serve off loopback', () => {
  it('refuses to start without an admin token, in one line naming the fix', async () => {
    const r = await gamehost(['emulator', 'serve', '--host', '0.0.0.0', '--port', '0'], isolatedEnv());
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      'error: emulator serve on 0.0.0.0 needs an admin token: set GAMEHOST_EMULATOR_ADMIN_TOKEN or pass --admin-token-file <file> (or serve on --host 127.0.0.1)\n',
    );
  });

  it('refuses an admin token under 32 characters, in one line, exit 1', async () => {
    const r = await gamehost(['emulator', 'serve', '--host', '0.0.0.0', '--port', '0', '--data-dir', tempDir()], { ...isolatedEnv(), GAMEHOST_EMULATOR_ADMIN_TOKEN: 'hunter2' });
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe('error: GAMEHOST_EMULATOR_ADMIN_TOKEN: the admin token must be at least 32 characters; this one has 7; make one with `openssl rand -hex 32`\n');
  });

  // sysfs refuses a new directory to anyone, root too (EPERM), where a permission bit would not stop root; procfs
  // answers ENOENT, on which Node's recursive mkdir tried again for good and serve never answered (SIGTERM either).
  it.skipIf(process.platform !== 'linux')('a data directory it cannot write: one line naming it and what it needs, exit 1, no crash report', async () => {
    for (const dir of [`/sys/gamehost-${process.pid}`, `/proc/gamehost-${process.pid}/data`]) {
      const r = await gamehost(['emulator', 'serve', '--port', '0', '--data-dir', dir], isolatedEnv());
      expect(r.code).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toMatch(new RegExp(`^error: the data directory ${dir} must be a directory this user can read and write \\(.*\\)\n$`));
    }
  });

  it('starts with --admin-token-file and requires that token', async () => {
    const file = path.join(tempDir(), 'admin-token');
    fs.writeFileSync(file, `${ADMIN}\n`);
    const env = isolatedEnv();
    const server = await serve(['--host', '0.0.0.0', '--admin-token-file', file, '--data-dir', tempDir()], env);
    try {
      expect((await fetch(`${server.endpoint}/_emulator/games`)).status).toBe(401);
      expect((await fetch(`${server.endpoint}/_emulator/games`, { headers: { authorization: `Bearer ${ADMIN}` } })).status).toBe(200);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);
});

function openssl(args: string[], cwd: string): void {
  execFileSync('openssl', args, { cwd, stdio: 'ignore' });
}

/** A private CA and a certificate it signed for localhost and 127.0.0.1, made here with the openssl tool. */
function makeCertificates(dir: string, serial: string): void {
  fs.writeFileSync(path.join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  if (!fs.existsSync(path.join(dir, 'ca.pem'))) {
    openssl(['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2',
      '-subj', '/CN=gamehost test CA', '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign'], dir);
  }
  openssl(['req', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', 'key.pem', '-out', 'server.csr', '-subj', '/CN=localhost'], dir);
  openssl(['x509', '-req', '-in', 'server.csr', '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', serial, '-out', 'cert.pem', '-days', '1', '-extfile', 'san.ext'], dir);
}

/** The serial number of the certificate a server presents now. */
function servedSerial(endpoint: string, ca: Buffer): Promise<string> {
  const url = new URL(endpoint);
  return new Promise((resolve, reject) => {
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca, servername: 'localhost' }, () => {
      resolve(new X509Certificate(socket.getPeerCertificate(true).raw).serialNumber);
      socket.end();
    });
    socket.once('error', reject);
  });
}

let hasOpenssl = true;
try {
  execFileSync('openssl', ['version'], { stdio: 'ignore' });
} catch {
  hasOpenssl = false;
}

describe.skipIf(!hasOpenssl && process.env.CI !== 'true')('emulator serve --tls-cert --tls-key', () => {
  it('serves HTTPS the CLI trusts through NODE_EXTRA_CA_CERTS, and takes up a new certificate on SIGHUP', async () => {
    const dir = tempDir();
    makeCertificates(dir, '1001');
    const home = isolatedEnv();
    const server = await serve(['--tls-cert', path.join(dir, 'cert.pem'), '--tls-key', path.join(dir, 'key.pem'), '--data-dir', tempDir()], home);
    try {
      expect(server.endpoint).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
      const ca = fs.readFileSync(path.join(dir, 'ca.pem'));
      const env = { ...home, GAMEHOST_ENDPOINT: server.endpoint, NODE_EXTRA_CA_CERTS: path.join(dir, 'ca.pem') };
      const created = await gamehost(['emulator', 'game', 'create', '--env'], env);
      expect(created.code).toBe(0);
      const job = { ...env, ...exported(created.stdout) };
      expect(job.GAMEHOST_ENDPOINT).toBe(server.endpoint);
      // A push follows the presigned URLs, which must be https too.
      const file = path.join(dir, 'server.tar');
      fs.writeFileSync(file, Buffer.alloc(10_000, 1));
      expect((await gamehost(['build', 'push', file, '--tag', 'game-server:tls', '-q'], job)).code).toBe(0);
      expect((await gamehost(['lobby', 'create', '--game-mode', 'default', '-q'], job)).code).toBe(0);
      // Without the CA the certificate is not trusted: a network error, exit 6 (in-process: this process was
      // started without the CA, and retries are quick here).
      const untrusted = await runCli(['stats'], { env: { ...job, NODE_EXTRA_CA_CERTS: undefined } });
      expect(untrusted.code).toBe(6);

      expect(await servedSerial(server.endpoint, ca)).toBe((1001).toString(16).toUpperCase().padStart(4, '0'));
      makeCertificates(dir, '1002');
      const reloaded = new Promise<void>((resolve) => server.child.stderr!.on('data', () => server.stderr().includes('Reloaded the TLS') && resolve()));
      server.child.kill('SIGHUP');
      await reloaded;
      expect(await servedSerial(server.endpoint, ca)).toBe((1002).toString(16).toUpperCase().padStart(4, '0'));
      // A bad pair on SIGHUP keeps the one in use.
      fs.writeFileSync(path.join(dir, 'key.pem'), 'not a key');
      const kept = new Promise<void>((resolve) => server.child.stderr!.on('data', () => server.stderr().includes('kept the TLS') && resolve()));
      server.child.kill('SIGHUP');
      await kept;
      expect((await gamehost(['stats', '-q'], job)).code).toBe(0);
    } finally {
      expect(await server.stop()).toBe(0);
    }
  }, 60_000);
});
