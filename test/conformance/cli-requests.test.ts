// What the CLI puts on the wire, checked against the spec: the CLI runs against a recording proxy in front of the
// emulator, and every request it sends (and every answer it gets) is validated afterwards.
import fs from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { DEVIATIONS } from '../../src/emulator/deviations.js';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { startTestEmulator } from '../helpers/emulator.js';
import { OPERATIONS, SERVER_OPERATIONS, SPEC_PRESENT, Spec, type Exchange } from './openapi.js';

/** Forwards every request to `target` unchanged (Host included, so presigned URLs lead back here) and keeps a copy. */
async function recordingProxy(target: string): Promise<{ url: string; exchanges: Exchange[]; close(): Promise<void> }> {
  const exchanges: Exchange[] = [];
  const upstream = new URL(target);
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const requestBody = Buffer.concat(chunks);
      const forward = http.request(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers, agent: false },
        (answer) => {
          const back: Buffer[] = [];
          answer.on('data', (c: Buffer) => back.push(c));
          answer.on('end', () => {
            const responseBody = Buffer.concat(back);
            exchanges.push({
              method: req.method!,
              url: req.url!,
              requestHeaders: { ...req.headers },
              requestBody: requestBody.toString('utf8'),
              status: answer.statusCode!,
              responseHeaders: { ...answer.headers },
              responseBody: responseBody.toString('utf8'),
            });
            res.writeHead(answer.statusCode!, answer.headers);
            res.end(responseBody);
          });
        },
      );
      forward.on('error', () => res.destroy());
      // A client that goes away (a watch ended early) ends the request it made, as the service would see it.
      res.on('close', () => {
        if (!res.writableFinished) forward.destroy();
      });
      forward.end(requestBody);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    exchanges,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

describe.skipIf(!SPEC_PRESENT)('the requests the CLI sends conform to rivet-openapi.yml', () => {
  let spec: Spec;
  let emu: Awaited<ReturnType<typeof startTestEmulator>>;
  let proxy: Awaited<ReturnType<typeof recordingProxy>>;
  let env: Record<string, string | undefined>;
  // Made in a hook, not while the tests are collected: a run without the spec skips them, and then no hook
  // would remove it.
  let dir: string;

  beforeAll(async () => {
    dir = tempDir();
    spec = new Spec();
    // Small parts, so a file of a few hundred KiB is a multipart upload.
    // Short log watches, so a followed lobby's watch answers (and is recorded) within the test.
    emu = await startTestEmulator({ partSize: 64 * 1024, singlePartMax: 32 * 1024 }, { logWatch: { waitMs: 200, pollMs: 20, minMs: 50 } });
    proxy = await recordingProxy(emu.endpoint);
    env = {
      ...isolatedEnv(),
      GAMEHOST_ENDPOINT: proxy.url,
      GAMEHOST_TOKEN: emu.tokens.cloud,
      GAMEHOST_NAMESPACE_TOKEN: emu.tokens.public,
      GAMEHOST_GAME: emu.gameId,
      GAMEHOST_NAMESPACE: emu.namespaceId,
    };
  });
  afterAll(async () => {
    await proxy.close();
    await emu.close();
  });

  const run = async (args: string[]) => {
    const r = await runCli(args, { env, cwd: dir });
    expect(r.code, r.stderr).toBe(0);
    return r;
  };

  // Some twenty commands in a row (about 5 s alone): at a load of 14 on 2 cores they took over the 20 s default.
  it('runs every command that calls the service, through the proxy', { timeout: 60_000 }, async () => {
    const created = await run([
      'lobby', 'create', '--game-mode', 'duos', '--region', 'lnd-fra', '--max-players', '4', '--publicity', 'private',
      '--tag', 'map=dust', '--tag', 'mode=ranked', '--config', '{"round":3}', '--verification', '{"v":[1,2]}',
      '--hcaptcha', 'resp', '--json',
    ]);
    await run(['lobby', 'create', '--game-mode', 'default', '--turnstile', 'resp']);
    await run(['lobby', 'create', '--game-mode', 'squads']);
    await run(['stats', '--json']);
    const found = await run(['lobby', 'find', '--game-mode', 'duos', '--game-mode', 'squads', '--region', 'lnd-fra', '--tag', 'map=dust', '--max-players', '4', '--json']);
    await run(['lobby', 'find', '--game-mode', 'duos', '--region', 'lnd-fra', '--no-create', '-q']);
    await run(['lobby', 'join', JSON.parse(found.stdout).lobby.lobby_id, '--json']);
    await run(['lobby', 'list', '--state']);
    await run(['region', 'list']);
    // The configuration commands: every namespace and version route they call.
    await run(['namespace', 'create', 'conf', '0.0.1', '--display-name', 'Conf']);
    await run(['namespace', 'set-version', 'conf', '0.0.1']);
    await run(['namespace', 'history', 'conf', '--limit', '3']);
    await run(['namespace', 'config', 'conf', '--lobby-count-max', '20']);
    await run(['version', 'show', '0.0.1']);
    await run(['token', 'create', 'development', '--namespace', 'conf', '--port', 'default=7777/udp']);
    // A cloud token alone: the matchmaker call goes with a public namespace token made with it.
    const cloudOnly = await runCli(['stats', '--json'], { env: { ...env, GAMEHOST_NAMESPACE_TOKEN: undefined }, cwd: dir });
    expect(cloudOnly.code, cloudOnly.stderr).toBe(0);
    await run(['lobby', 'logs', JSON.parse(created.stdout).lobby.lobby_id, '--json']);
    // Without --json it also asks for the game's regions, to name the lobby's.
    await run(['lobby', 'logs', JSON.parse(created.stdout).lobby.lobby_id]);
    // The log lines: the most recent, a watch from an index (--follow), and the export of a stream.
    const lobbyId = JSON.parse(created.stdout).lobby.lobby_id;
    await emu.services.logs.append(lobbyId, 'std_out', [Buffer.from('hello'), Buffer.from('world')]);
    await emu.services.logs.append(lobbyId, 'std_err', [Buffer.from('oops')]);
    const followed = runCli(['lobby', 'logs', lobbyId, '--follow', '--interval', '0.1'], { env, cwd: dir });
    // Once a watch was answered (a line came after the recent ones), the lobby stops and the follow ends.
    await vi.waitFor(() => expect(proxy.exchanges.some((x) => x.url.includes('watch_index='))).toBe(true), { timeout: 5000, interval: 20 });
    await emu.services.logs.append(lobbyId, 'std_out', [Buffer.from('later')]);
    await vi.waitFor(() => expect(proxy.exchanges.filter((x) => x.url.includes('watch_index=') && x.responseBody.includes(Buffer.from('later').toString('base64')))).not.toEqual([]), { timeout: 5000, interval: 20 });
    await emu.services.lobbies.stop(lobbyId, { exitCode: 0 });
    const follow = await followed;
    expect([follow.code, follow.stderr]).toEqual([0, `lobby ${lobbyId} stopped with exit code 0\n`]);
    // Within one millisecond the emulator orders each stream's lines, not the two streams': oops may come first.
    expect(follow.stdout).toMatch(/\n\n(hello\nworld\noops|hello\noops\nworld)\nlater\n$/);
    await run(['lobby', 'logs', lobbyId, '--export', 'stdout.txt']);
    expect(fs.readFileSync(path.join(dir, 'stdout.txt'), 'utf8')).toBe('hello\nworld\nlater\n');
    await run(['history', 'export', '--since', '1h', '-o', 'history.csv']);
    expect(fs.readFileSync(path.join(dir, 'history.csv'), 'utf8')).toMatch(/^lobby_id,namespace_id,/);
    fs.writeFileSync(path.join(dir, 'small.tar'), Buffer.alloc(1000, 1));
    fs.writeFileSync(path.join(dir, 'large.tar'), Buffer.alloc(150 * 1024 + 7, 2));
    const small = await run(['build', 'push', 'small.tar', '--tag', 'game:small', '--json']);
    // A deploy of that build: validate, reserve a name, create the version, deploy it.
    fs.writeFileSync(path.join(dir, 'rivet.yaml'), `matchmaker:\n  docker:\n    image_id: ${JSON.parse(small.stdout).build_id}\n  game_modes:\n    default: {}\n`);
    await run(['deploy', 'staging']);
    await run(['build', 'push', 'large.tar', '--tag', 'game:large', '--name', 'Large build', '--kind', 'oci_bundle', '--content-type', 'application/octet-stream', '--json']);
    const parts = proxy.exchanges.filter((x) => x.method === 'PUT' && !spec.find(x.method, x.url));
    expect(parts).toHaveLength(1 + 3);
  });

  it('every request to an operation matches its request schema, with a bearer token and a known length', () => {
    const problems = proxy.exchanges.flatMap((x) => {
      const op = spec.find(x.method, x.url);
      return op ? spec.checkRequest(op, x).map((p) => `${x.method} ${x.url}: ${p}`) : [];
    });
    expect(problems).toEqual([]);
  });

  it('every answer the CLI got matches the spec too', () => {
    const problems = proxy.exchanges.flatMap((x) => {
      const op = spec.find(x.method, x.url);
      return op ? spec.checkResponse(op, x).map((p) => `${x.method} ${x.url} → ${x.status}: ${p}`) : [];
    });
    expect(problems).toEqual([]);
  });

  it('covered every operation, and the request deviations the list names were all needed', () => {
    const seen = new Set(proxy.exchanges.map((x) => spec.find(x.method, x.url)?.id));
    for (const id of OPERATIONS.filter((o) => !SERVER_OPERATIONS.includes(o))) expect(seen.has(id), id).toBe(true);
    expect(DEVIATIONS.filter((d) => d.kind === 'request-body' && !spec.used.has(d))).toEqual([]);
  });

  it('presigned requests carry no bearer token, and each PUT has its exact Content-Length', () => {
    const presigned = proxy.exchanges.filter((x) => !spec.find(x.method, x.url));
    expect(presigned.map((x) => `${x.method} ${x.url.split('/')[1]}`).sort()).toEqual([
      'GET _export',
      'GET _export',
      ...Array(4).fill('PUT _upload'),
    ]);
    for (const x of presigned) {
      expect(x.requestHeaders.authorization).toBeUndefined();
      expect(x.status).toBe(200);
      if (x.method === 'PUT') {
        expect(x.requestHeaders['transfer-encoding']).toBeUndefined();
        expect(Number(x.requestHeaders['content-length'])).toBe(Buffer.byteLength(x.requestBody, 'utf8'));
      }
    }
  });
});
