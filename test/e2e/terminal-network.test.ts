// The network contract: proxies from the environment, a private CA through NODE_EXTRA_CA_CERTS, TLS failures as
// exit 6, and --verbose that never shows a token, whatever the command.
import { execFile } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Env } from '../../src/shared/io.js';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { endpointEnv, startTestEmulator, useEmulator } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

type Emulator = Awaited<ReturnType<typeof startTestEmulator>>;

// A self-signed certificate for 127.0.0.1 (valid until 2126), standing in for a service behind a private CA.
const TEST_KEY = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgN8ONG+QJ0r5p2sff
J8uqpgQnapMMxuPxXqOQKVSa0yqhRANCAAT/nXg0sIEFFwd4IqYAQrkk7Qo1Wma5
I5RGv43BLcFld2Md6Q3E8TeGL1LqSseuJ8iM7a9XUywK7Gn6CEFK0TXc
-----END PRIVATE KEY-----
`;
const TEST_CERT = `-----BEGIN CERTIFICATE-----
MIIBpDCCAUmgAwIBAgIUFZkJeCVtEmYm2ulLdNYnAqMS9/kwCgYIKoZIzj0EAwIw
GDEWMBQGA1UEAwwNZ2FtZWhvc3QgdGVzdDAgFw0yNjExMjExMTA4MzNaGA8yMTI2
MTAyODExMDgzM1owGDEWMBQGA1UEAwwNZ2FtZWhvc3QgdGVzdDBZMBMGByqGSM49
AgEGCCqGSM49AwEHA0IABP+deDSwgQUXB3gipgBCuSTtCjVaZrkjlEa/jcEtwWV3
Yx3pDcTxN4YvUupKx64nyIztr1dTLArsafoIQUrRNdyjbzBtMB0GA1UdDgQWBBSD
oti82vgRqBgt2U5oM58htXviezAfBgNVHSMEGDAWgBSDoti82vgRqBgt2U5oM58h
tXviezAaBgNVHREEEzARhwR/AAABgglsb2NhbGhvc3QwDwYDVR0TAQH/BAUwAwEB
/zAKBggqhkjOPQQDAgNJADBGAiEA1VlYSelF5fazyeX80+fv7j/LXXj3edYDcOmk
zeTKrYMCIQCHI+Y10qA4FtCg0YQDNiFSuVcAGkOeVpx8hjJhMylIhQ==
-----END CERTIFICATE-----
`;

/**
 * A forward proxy on loopback: CONNECT tunnels (what the CLI uses) and absolute-form requests, each one recorded.
 * The first `hold` CONNECTs are left unanswered, as a proxy that cannot reach the host leaves them. With `auth`
 * (`user:password`) it answers 407 to a CONNECT without those Basic credentials; with `tls` it is an https proxy
 * (the test certificate). `emulator.test` and `[::1]` are names only it resolves, to the emulator (127.0.0.1).
 */
async function startProxy(options: { hold?: number; auth?: string; tls?: boolean } = {}) {
  const { hold = 0, auth, tls = false } = options;
  const seen: string[] = [];
  const credentials: (string | undefined)[] = [];
  const held: net.Socket[] = [];
  const onRequest = (req: http.IncomingMessage, res: http.ServerResponse) => {
    seen.push(`${req.method} ${req.url}`);
    const target = new URL(req.url!);
    const upstream = http.request(target, { method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode!, up.headers);
      up.pipe(res);
    });
    upstream.on('error', () => res.writeHead(502).end());
    req.pipe(upstream);
  };
  const server = tls ? https.createServer({ key: TEST_KEY, cert: TEST_CERT }, onRequest) : http.createServer(onRequest);
  server.on('connect', (req: http.IncomingMessage, client: net.Socket, head: Buffer) => {
    seen.push(`CONNECT ${req.url}`);
    credentials.push(req.headers['proxy-authorization']);
    if (auth && req.headers['proxy-authorization'] !== `Basic ${Buffer.from(auth).toString('base64')}`) {
      return void client.end('HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm="test"\r\nContent-Length: 0\r\n\r\n');
    }
    // Held until the client gives up (the server side would stay half-open after the client's end).
    if (held.length < hold) return void held.push(client.on('error', () => {}).on('end', () => client.destroy()));
    const target = new URL(`http://${req.url}`);
    const mapped = target.hostname === 'emulator.test' || target.hostname === '[::1]';
    if (!mapped && target.hostname.startsWith('[')) return void client.end('HTTP/1.1 400 Bad Request\r\n\r\n');
    const upstream = net.connect(Number(target.port), mapped ? '127.0.0.1' : target.hostname, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      upstream.write(head);
      upstream.pipe(client);
      client.pipe(upstream);
    });
    upstream.on('error', () => client.destroy());
    client.on('error', () => upstream.destroy());
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    seen,
    credentials,
    url: `${tls ? 'https' : 'http'}://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => {
      for (const socket of held) socket.destroy();
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  };
}

/** An https front for the emulator with the self-signed certificate. */
async function startTlsFront(emu: Emulator) {
  const target = new URL(emu.endpoint);
  const server = https.createServer({ key: TEST_KEY, cert: TEST_CERT }, (req, res) => {
    const upstream = http.request({ host: target.hostname, port: target.port, path: req.url, method: req.method, headers: req.headers }, (up) => {
      res.writeHead(up.statusCode!, up.headers);
      up.pipe(res);
    });
    req.pipe(upstream);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { endpoint: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, close: () => new Promise((r) => server.close(r)) };
}

describe('network', () => {
  const fx = useEmulator();

  describe('HTTP_PROXY / HTTPS_PROXY / NO_PROXY', () => {
    let proxy: Awaited<ReturnType<typeof startProxy>>;
    beforeAll(async () => {
      proxy = await startProxy();
    });
    afterAll(() => proxy.close());

    it('API calls and the presigned download go through the proxy', async () => {
      proxy.seen.length = 0;
      const host = new URL(fx.emu.endpoint).host;
      const stats = await runCli(['stats', '--json'], { env: { ...fx.env, HTTP_PROXY: proxy.url } });
      expect(stats.code).toBe(0);
      expect(JSON.parse(stats.stdout).player_count).toBe(0);
      const history = await runCli(['history', 'export', '--since', '1h', '-o', '-'], { env: { ...fx.env, HTTP_PROXY: proxy.url } });
      expect(history.code).toBe(0);
      // No lobbies in this emulator: the export is the service's 0-byte file, downloaded through the proxy all the same.
      expect(history.stdout).toBe('');
      // Every request goes through a CONNECT tunnel to the service's host, kept alive for the run (undici may open a
      // second connection for a request that follows another at once, while it checks the idle one).
      expect(proxy.seen.length).toBeGreaterThanOrEqual(2);
      expect(proxy.seen.length).toBeLessThanOrEqual(3);
      expect(new Set(proxy.seen)).toEqual(new Set([`CONNECT ${host}`]));
    });

    it('build push sends its parts through the proxy too, and NO_PROXY bypasses it', async () => {
      proxy.seen.length = 0;
      const host = new URL(fx.emu.endpoint).host;
      const file = path.join(tempDir(), 'proxied.tar');
      fs.writeFileSync(file, crypto.randomBytes(100_000));
      // Only the proxy can resolve emulator.test: the part's presigned URL (on the same host) must go through it too.
      const hidden = `emulator.test:${new URL(fx.emu.endpoint).port}`;
      const r = await runCli(['build', 'push', file, '--tag', 'proxied:v1', '--json', '--insecure-http'], {
        env: { ...fx.env, GAMEHOST_ENDPOINT: `http://${hidden}`, HTTP_PROXY: proxy.url },
      });
      expect(r.stderr).not.toContain('error');
      expect(r.code).toBe(0);
      expect(JSON.parse(r.stdout).sha256).toBe(crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex'));
      // Every connection is a tunnel through the proxy (the part's too: only the proxy resolves emulator.test), kept
      // alive across the three calls (create, part, complete) one after the other; as for stats above, undici may
      // open a second one for a call that follows another at once, before the first is back in its pool (one
      // clean-clone run saw 2), never one per call.
      expect(proxy.seen.length).toBeGreaterThanOrEqual(1);
      expect(proxy.seen.length).toBeLessThanOrEqual(2);
      expect(new Set(proxy.seen)).toEqual(new Set([`CONNECT ${hidden}`]));
      proxy.seen.length = 0;
      const bypass = await runCli(['build', 'push', file, '--tag', 'proxied:v2'], { env: { ...fx.env, HTTP_PROXY: proxy.url, NO_PROXY: 'localhost, 127.0.0.1' } });
      expect(bypass.code).toBe(0);
      expect(proxy.seen).toEqual([]);
    });

    it('a connection not made within --timeout never left: even the build create (not idempotent) is sent again', async () => {
      const stalling = await startProxy({ hold: 1 });
      try {
        const host = new URL(fx.emu.endpoint).host;
        const file = path.join(tempDir(), 'stalled-proxy.tar');
        fs.writeFileSync(file, crypto.randomBytes(1000));
        const r = await runCli(['build', 'push', file, '--tag', 'stalled-proxy:v1', '--json', '--verbose', '--timeout', '0.3'], { env: { ...fx.env, HTTP_PROXY: stalling.url } });
        expect(r.code).toBe(0);
        expect(JSON.parse(r.stdout).bytes).toBe(1000);
        expect(r.stderr).toMatch(new RegExp(`^retrying POST /cloud/games/[\\w-]+/builds in \\d+ ms \\(could not reach ${host}: connect timed out \\(CONNECT_TIMEOUT\\)\\)$`, 'm'));
        // The held tunnel, then one that carries the rest of the push.
        expect(stalling.seen).toEqual([`CONNECT ${host}`, `CONNECT ${host}`]);
      } finally {
        await stalling.close();
      }
    });

    it('the lower-case variables work too, and NO_PROXY bypasses the proxy', async () => {
      proxy.seen.length = 0;
      const lower = await runCli(['stats'], { env: { ...fx.env, http_proxy: proxy.url } });
      expect(lower.code).toBe(0);
      expect(proxy.seen.length).toBeGreaterThan(0);
      proxy.seen.length = 0;
      const bypass = await runCli(['stats'], { env: { ...fx.env, HTTP_PROXY: proxy.url, NO_PROXY: '127.0.0.1' } });
      expect(bypass.code).toBe(0);
      expect(proxy.seen).toEqual([]);
    });

    it('the embedded emulator is never reached through a proxy', async () => {
      proxy.seen.length = 0;
      const r = await runCli(['stats'], { env: isolatedEnv({ HTTP_PROXY: proxy.url, HTTPS_PROXY: proxy.url }) });
      expect(r.code).toBe(0);
      expect(proxy.seen).toEqual([]);
    });

    it('a proxy that is down is a network error, exit 6', async () => {
      const r = await runCli(['stats'], { env: { ...fx.env, HTTP_PROXY: 'http://127.0.0.1:9' } });
      expect(r.code).toBe(6);
      expect(r.stderr).toMatch(/^error: could not reach .+\n  nothing listens there: start the emulator with `gamehost emulator serve`\n$/);
    });
  });

  describe('what the proxy URL and the target can be', () => {
    const sha = (file: string) => crypto.createHash('sha256').update(fs.readFileSync(file)).digest('hex');
    /** A push whose API calls and part all go to `emulator.test` (only the proxy resolves it), then an export. */
    const pushAndExport = async (run: (args: string[], env: Env) => Promise<{ code: number | null; stdout: string; stderr: string }>, env: Env) => {
      const file = path.join(tempDir(), 'proxied.tar');
      fs.writeFileSync(file, crypto.randomBytes(300_000));
      const hidden = { ...fx.env, GAMEHOST_ENDPOINT: `http://emulator.test:${new URL(fx.emu.endpoint).port}`, ...env };
      const push = await run(['build', 'push', file, '--tag', `proxied:${crypto.randomUUID().slice(0, 8)}`, '--json', '--insecure-http'], hidden);
      // The progress lines, and no warning (a TLS server name that is an IP address makes Node print one).
      expect(push.stderr).not.toMatch(/warning|error/i);
      expect(push.code).toBe(0);
      expect(JSON.parse(push.stdout).sha256).toBe(sha(file));
      // A lobby, so the export has rows (a window without lobbies is the service's 0-byte file).
      const lobby = await run(['lobby', 'create', '--game-mode', 'default', '-q', '--insecure-http'], hidden);
      expect(lobby.code).toBe(0);
      const history = await run(['history', 'export', '--since', '1h', '-o', '-', '--insecure-http'], hidden);
      expect(history.code).toBe(0);
      expect(history.stdout).toMatch(/^lobby_id,namespace_id,/);
      expect(history.stdout).toContain(lobby.stdout.trim());
    };
    const inProcess = async (args: string[], env: Env) => {
      const r = await runCli(args, { env });
      return { code: r.code, stdout: r.stdout, stderr: r.stderr };
    };

    it('credentials in the proxy URL go as Basic Proxy-Authorization: API calls, a part and the export', async () => {
      const proxy = await startProxy({ auth: 'user:p@ss' });
      try {
        const port = new URL(proxy.url).port;
        await pushAndExport(inProcess, { HTTP_PROXY: `http://user:p%40ss@127.0.0.1:${port}` });
        expect(proxy.seen.length).toBeGreaterThanOrEqual(2);
        expect(new Set(proxy.seen)).toEqual(new Set([`CONNECT emulator.test:${new URL(fx.emu.endpoint).port}`]));
        expect(new Set(proxy.credentials)).toEqual(new Set([`Basic ${Buffer.from('user:p@ss').toString('base64')}`]));
      } finally {
        await proxy.close();
      }
    });

    it('a proxy that wants credentials and has none: one line saying so, exit 6, not asked again', async () => {
      const proxy = await startProxy({ auth: 'user:p@ss' });
      try {
        const r = await runCli(['stats'], { env: { ...fx.env, HTTPS_PROXY: proxy.url, HTTP_PROXY: proxy.url } });
        expect(r.code).toBe(6);
        expect(r.stderr).toBe(
          `error: could not reach ${new URL(fx.emu.endpoint).host}: the proxy ${new URL(proxy.url).host} answered 407 to CONNECT: it wants credentials (user:password@ in the proxy URL) (EPROXYAUTH)\n`,
        );
        expect(proxy.seen).toHaveLength(1);
      } finally {
        await proxy.close();
      }
    });

    it('an IPv6 target is asked for with brackets: CONNECT [::1]:port', async () => {
      const proxy = await startProxy();
      try {
        const port = new URL(fx.emu.endpoint).port;
        const r = await runCli(['stats', '--json'], { env: { ...fx.env, GAMEHOST_ENDPOINT: `http://[::1]:${port}`, HTTP_PROXY: proxy.url } });
        expect(r.stderr).toBe('');
        expect(r.code).toBe(0);
        expect(proxy.seen).toEqual([`CONNECT [::1]:${port}`]);
      } finally {
        await proxy.close();
      }
    });

    it('NO_PROXY takes CIDR ranges and IPv6 addresses', async () => {
      const proxy = await startProxy();
      try {
        const direct = await runCli(['stats'], { env: { ...fx.env, HTTP_PROXY: proxy.url, NO_PROXY: 'fd00::/8, 127.0.0.0/8' } });
        expect(direct.code).toBe(0);
        // ::1 is not on the emulator's 127.0.0.1: bypassing the proxy, the request is refused there.
        const port = new URL(fx.emu.endpoint).port;
        const v6 = await runCli(['stats'], { env: { ...fx.env, GAMEHOST_ENDPOINT: `http://[::1]:${port}`, HTTP_PROXY: proxy.url, NO_PROXY: '::1' } });
        expect(v6.code).toBe(6);
        expect(v6.stderr).toContain(`could not reach [::1]:${port}: connection refused (ECONNREFUSED)`);
        expect(proxy.seen).toEqual([]);
      } finally {
        await proxy.close();
      }
    });

    it('an https:// proxy is spoken TLS to (its CA from NODE_EXTRA_CA_CERTS, a real process): API calls, a part and the export', async () => {
      const proxy = await startProxy({ tls: true });
      const bundle = path.join(tempDir(), 'ca.pem');
      fs.writeFileSync(bundle, TEST_CERT);
      // Asynchronous: the proxy answering the child lives in this process.
      const run = (args: string[], env: Env) =>
        new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
          const child = execFile(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env } as NodeJS.ProcessEnv, timeout: 20_000 }, (_err, stdout, stderr) =>
            resolve({ code: child.exitCode, stdout, stderr }),
          );
        });
      try {
        await pushAndExport(run, { HTTP_PROXY: proxy.url, NODE_EXTRA_CA_CERTS: bundle });
        expect(proxy.seen.length).toBeGreaterThanOrEqual(2);
        expect(new Set(proxy.seen)).toEqual(new Set([`CONNECT emulator.test:${new URL(fx.emu.endpoint).port}`]));
      } finally {
        await proxy.close();
      }
    });
  });

  describe('TLS and NODE_EXTRA_CA_CERTS', () => {
    let front: Awaited<ReturnType<typeof startTlsFront>>;
    beforeAll(async () => {
      front = await startTlsFront(fx.emu);
    });
    afterAll(() => front.close());

    it('an untrusted certificate is exit 6, at once, with the NODE_EXTRA_CA_CERTS hint', async () => {
      const r = await runCli(['stats'], { env: { ...fx.env, GAMEHOST_ENDPOINT: front.endpoint } });
      expect(r.code).toBe(6);
      expect(r.stderr).toBe(
        `error: could not reach ${new URL(front.endpoint).host}: TLS failure: self-signed certificate (DEPTH_ZERO_SELF_SIGNED_CERT)\n` +
          '  for a private CA, point NODE_EXTRA_CA_CERTS at its bundle\n',
      );
    });

    it('with the CA in NODE_EXTRA_CA_CERTS the same service is trusted (a real process, as Node reads it at start)', async () => {
      const dir = tempDir();
      const bundle = path.join(dir, 'ca.pem');
      fs.writeFileSync(bundle, TEST_CERT);
      // Asynchronous: the https front answering the child lives in this process.
      const run = (extra: Env) =>
        new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
          const child = execFile(process.execPath, [BIN, 'stats', '--json'], { env: { PATH: process.env.PATH, ...fx.env, GAMEHOST_ENDPOINT: front.endpoint, ...extra } as NodeJS.ProcessEnv, timeout: 15_000 }, (_err, stdout, stderr) =>
            resolve({ status: child.exitCode, stdout, stderr }),
          );
        });
      const trusted = await run({ NODE_EXTRA_CA_CERTS: bundle });
      expect(trusted.stderr).toBe('');
      expect(trusted.status).toBe(0);
      // The service's statistics, whatever lobbies the other tests of this file left in the shared emulator.
      expect(Number.isInteger(JSON.parse(trusted.stdout).player_count)).toBe(true);
      expect((await run({})).status).toBe(6);
    });
  });
});

describe('--verbose never prints a token, for any command', () => {
  let emu: Emulator;
  let env: Env;
  let secrets: string[];
  beforeAll(async () => {
    emu = await startTestEmulator();
    env = { ...isolatedEnv(), ...endpointEnv(emu) };
    secrets = [emu.tokens.cloud, emu.tokens.public];
  });
  afterAll(() => emu.close());

  const check = (r: { stdout: string; stderr: string }) => {
    for (const t of secrets) expect(r.stdout + r.stderr).not.toContain(t);
  };

  it('API commands, with tokens from the environment, log requests with redacted tokens', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'server.tar'), Buffer.alloc(4096, 7));
    const created = await runCli(['lobby', 'create', '--game-mode', 'default', '--json', '--verbose'], { env });
    expect(created.code).toBe(0);
    check(created);
    const lobby = JSON.parse(created.stdout).lobby.lobby_id as string;
    const runs: [string[], number][] = [
      [['stats'], 0],
      [['lobby', 'logs', lobby], 0],
      [['history', 'export', '--since', '1h', '-o', '-'], 0],
      [['build', 'push', 'server.tar', '--tag', 'verbose:v1'], 0],
      [['lobby', 'logs', '00000000-0000-4000-8000-000000000000'], 4],
    ];
    for (const [args, code] of runs) {
      const r = await runCli([...args, '--verbose'], { env, cwd: dir });
      expect({ args, code: r.code }).toEqual({ args, code });
      expect(r.stderr).toMatch(/^> (GET|POST) http:\/\/127\.0\.0\.1:\d+\//m);
      expect(r.stderr).toMatch(/^target http:\/\/127\.0\.0\.1:\d+ \(GAMEHOST_ENDPOINT\); cloud token cloud\.\w{3}…[\w-]{3} \(GAMEHOST_TOKEN\)/m);
      check(r);
    }
    // The emulator's own admin commands, pointed at the running emulator or a data directory.
    for (const args of [['emulator', 'builds'], ['emulator', 'lobby', 'stop', lobby], ['emulator', 'reset', '--yes', '--data-dir', tempDir()]]) {
      const r = await runCli([...args, '--verbose'], { env, cwd: dir });
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      check(r);
    }
  });

  it('profile commands, login and logout, with tokens from stdin and the profile', async () => {
    const e = isolatedEnv();
    const login = await runCli(['login', '--verbose', '--endpoint', emu.endpoint, '--game', emu.gameId, '--namespace', emu.namespaceId, '--token-stdin', '--namespace-token-stdin'], {
      env: e,
      stdin: secrets.join('\n') + '\n',
    });
    expect(login.code).toBe(0);
    check(login);
    for (const args of [['profile', 'list'], ['profile', 'list', '--json'], ['profile', 'show'], ['profile', 'show', '--json'], ['profile', 'use', 'default'], ['stats'], ['lobby', 'create', '--game-mode', 'duos']]) {
      const r = await runCli([...args, '--verbose'], { env: e, tty: true });
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      check(r);
    }
    const logout = await runCli(['logout', '--verbose'], { env: e });
    expect(logout.code).toBe(0);
    check(logout);
  });

  it('the commands that never call the service, and a failing flag-given token', async () => {
    for (const args of [['completion', 'bash'], ['completion', 'zsh'], ['completion', 'fish'], ['--help'], ['help', 'exit-codes'], ['--version'], ['stats', '--help']]) {
      const r = await runCli([...args, '--verbose'], { env });
      expect({ args, code: r.code }).toEqual({ args, code: 0 });
      check(r);
    }
    const bad = 'cloud.bogusbogusbogusbogus.signaturesignaturesig';
    const r = await runCli(['history', 'export', '--since', '1h', '-o', '-', '--verbose', '--token', bad], { env });
    expect(r.code).toBe(3);
    expect(r.stderr).toContain('cloud token cloud.bog…sig (--token)');
    expect(r.stdout + r.stderr).not.toContain(bad);
  });

  it('emulator serve prints its own new tokens, never the ones it was given', async () => {
    const controller = new AbortController();
    // Stopped as soon as it has printed its last token, however long it took to start.
    const r = await runCli(['emulator', 'serve', '--port', '0', '--verbose'], {
      env: { ...isolatedEnv(), GAMEHOST_TOKEN: emu.tokens.cloud, GAMEHOST_NAMESPACE_TOKEN: emu.tokens.public },
      signal: controller.signal,
      onStdout: (text) => /^dev_token\t/m.test(text) && controller.abort(),
    });
    expect(r.stdout).toMatch(/^cloud_token\tcloud\./m);
    check(r);
  });
});
