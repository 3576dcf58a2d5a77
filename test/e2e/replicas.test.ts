// Two real `gamehost emulator serve` processes on one PostgreSQL database (and one shared data directory for the
// bytes) are one service: what goes in through one comes out of the other, and the CLI works across them.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import readline from 'node:readline';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCsv, runCli, tempDir } from '../helpers/cli.js';
import { createTestDatabase, PG_PRESENT, queryDatabase } from '../helpers/postgres.js';
import { replicaEnv, serve, SLOW, stopReplica, type Replica } from '../helpers/replica.js';
import { admit } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

const PART = 64 * 1024;
const CONFIG = { partSize: PART, singlePartMax: 32 * 1024, startDelayMs: 0, readyDelayMs: 0 };
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');

describe.skipIf(!PG_PRESENT)('two emulator replicas on one PostgreSQL database', SLOW, () => {
  let url: string;
  let dataDir: string;
  let configFile: string;
  let a: Replica;
  let b: Replica;
  const home = tempDir();
  const cliEnv = (r: Replica) => replicaEnv(home, r);
  const replicaArgs = () => ['--database', url, '--data-dir', dataDir, '--config', configFile];

  beforeAll(async () => {
    url = await createTestDatabase();
    dataDir = tempDir();
    configFile = path.join(tempDir(), 'emulator.json');
    fs.writeFileSync(configFile, JSON.stringify(CONFIG));
    // Started together: the advisory lock lets one migrate while the other waits.
    [a, b] = await Promise.all([serve(replicaArgs()), serve(replicaArgs())]);
  }, SLOW.timeout);
  afterAll(async () => {
    await Promise.all([stopReplica(a), stopReplica(b)]);
  }, SLOW.timeout);

  it('say which stores they use, and hand out the same tokens (one secret, made once in the database)', async () => {
    expect(a.info.stores).toEqual({ records: 'postgres', bytes: 'local' });
    expect(b.info.tokens).toEqual(a.info.tokens);
    expect(a.info.endpoint).not.toBe(b.info.endpoint);
    expect(await queryDatabase(url, "SELECT count(*)::int AS n FROM meta WHERE key = 'secret'")).toEqual([{ n: 1 }]);
    // Nothing of SQLite's in the data directory: the records are in the database (servers/ is each replica saying
    // it holds the directory, so `emulator reset` refuses while they run).
    expect(fs.readdirSync(dataDir).sort()).toEqual(['builds', 'servers', 'uploads']);
  });

  it('a lobby created through one is read, joined, counted, stopped and exported through the other', async () => {
    const created = await runCli(['lobby', 'create', '--game-mode', 'squads', '--json'], { env: cliEnv(a) });
    expect(created.code).toBe(0);
    const lobbyId = JSON.parse(created.stdout).lobby.lobby_id as string;

    const logs = await runCli(['lobby', 'logs', lobbyId, '--json'], { env: cliEnv(b) });
    expect(logs.code).toBe(0);
    expect(JSON.parse(logs.stdout).lobby.lobby_id).toBe(lobbyId);

    // Its server admits the creator's player through the other replica.
    await admit(b.info.endpoint, JSON.parse(created.stdout));
    const joined = await fetch(`${b.info.endpoint}/_emulator/lobbies/${lobbyId}/players`, { method: 'POST' });
    expect(joined.status).toBe(200);

    const statsA = JSON.parse((await runCli(['stats', '--json'], { env: cliEnv(a) })).stdout);
    const statsB = JSON.parse((await runCli(['stats', '--json'], { env: cliEnv(b) })).stdout);
    expect(statsB).toEqual(statsA);
    expect(statsA.game_modes.squads.player_count).toBe(2);

    const stopped = await runCli(['emulator', 'lobby', 'stop', lobbyId, '--exit-code', '3', '--json', '--endpoint', b.info.endpoint], { env: cliEnv(b) });
    expect(stopped.code).toBe(0);
    const after = JSON.parse((await runCli(['lobby', 'logs', lobbyId, '--json'], { env: cliEnv(a) })).stdout);
    expect(after.lobby.status.stopped).toMatchObject({ exit_code: 3, failed: true });

    const exportOf = async (r: Replica) => {
      const out = await runCli(['history', 'export', '--since', '1h', '-o', '-'], { env: cliEnv(r) });
      expect(out.code).toBe(0);
      return readCsv(out.stdout);
    };
    const [csvA, csvB] = [await exportOf(a), await exportOf(b)];
    expect(csvB).toEqual(csvA);
    expect(csvA.some((row) => row[0] === lobbyId), JSON.stringify(csvA)).toBe(true);
  });

  it('build push through one (multipart and single), listed complete through the other', async () => {
    const dir = tempDir();
    const multi = path.join(dir, 'multi.tar');
    const single = path.join(dir, 'single.tar');
    const multiBytes = crypto.randomBytes(5 * PART + 17);
    const singleBytes = crypto.randomBytes(1000);
    fs.writeFileSync(multi, multiBytes);
    fs.writeFileSync(single, singleBytes);
    const pushedMulti = await runCli(['build', 'push', multi, '--tag', 'replica:multi', '--json'], { env: cliEnv(a) });
    expect(pushedMulti.code, pushedMulti.stderr).toBe(0);
    expect(JSON.parse(pushedMulti.stdout)).toMatchObject({ parts: 6, sha256: sha(multiBytes) });
    const pushedSingle = await runCli(['build', 'push', single, '--tag', 'replica:single', '--json'], { env: cliEnv(b) });
    expect(pushedSingle.code, pushedSingle.stderr).toBe(0);
    expect(JSON.parse(pushedSingle.stdout)).toMatchObject({ parts: 1, sha256: sha(singleBytes) });

    const listed = JSON.parse((await runCli(['emulator', 'builds', '--json', '--endpoint', b.info.endpoint], { env: cliEnv(b) })).stdout);
    const byTag = Object.fromEntries(listed.builds.map((x: { image_tag: string }) => [x.image_tag, x]));
    expect(byTag['replica:multi']).toMatchObject({ complete: true, sha256: sha(multiBytes), content_length: multiBytes.length });
    expect(byTag['replica:single']).toMatchObject({ complete: true, sha256: sha(singleBytes) });
    // A tag taken through one replica is taken for the other.
    const again = await runCli(['build', 'push', single, '--tag', 'replica:multi'], { env: cliEnv(b) });
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('BUILD_TAG_TAKEN');
  });

  it('a build created through one is uploaded and completed through the other', async () => {
    const body = crypto.randomBytes(3 * PART);
    const created = await fetch(`${a.info.endpoint}/cloud/games/${a.info.game_id}/builds`, {
      method: 'POST',
      headers: { authorization: `Bearer ${a.info.tokens.cloud}`, 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'Across', image_tag: 'replica:across', image_file: { path: 'x.tar', content_length: body.length } }),
    }).then((r) => r.json() as Promise<{ upload_id: string; build_id: string; image_presigned_requests: { url: string; byte_offset: number; content_length: number }[] }>);
    for (const req of created.image_presigned_requests) {
      const u = new URL(req.url);
      const put = await fetch(b.info.endpoint + u.pathname + u.search, { method: 'PUT', body: body.subarray(req.byte_offset, req.byte_offset + req.content_length) });
      expect(put.status).toBe(200);
    }
    const done = await fetch(`${b.info.endpoint}/cloud/uploads/${created.upload_id}/complete`, {
      method: 'POST',
      headers: { authorization: `Bearer ${b.info.tokens.cloud}`, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(done.status).toBe(200);
    const [row] = await queryDatabase(url, 'SELECT complete, sha256 FROM builds WHERE build_id = $1', [created.build_id]);
    expect(row).toEqual({ complete: 1, sha256: sha(body) });
  });

  it('a push killed half-way is resumed by the next run, sending only the missing parts', async () => {
    const slow = await serve([...replicaArgs(), '--faults', 'latency=40ms']);
    try {
      const dir = tempDir();
      const file = path.join(dir, 'resume.tar');
      const bytes = crypto.randomBytes(16 * PART);
      fs.writeFileSync(file, bytes);
      const env = cliEnv(slow);
      const child = spawn(process.execPath, [BIN, 'build', 'push', file, '--tag', 'replica:resume', '--concurrency', '1', '--progress', 'json'], {
        env: { PATH: process.env.PATH, ...env },
        stdio: ['ignore', 'ignore', 'pipe'],
      });
      const exited = new Promise((resolve) => child.once('exit', resolve));
      await new Promise<void>((resolve) => {
        let parts = 0;
        readline.createInterface({ input: child.stderr! }).on('line', (line) => {
          if (line.startsWith('{') && JSON.parse(line).type === 'part' && ++parts === 4) resolve();
        });
      });
      child.kill('SIGKILL');
      await exited;
      const second = await runCli(['build', 'push', file, '--tag', 'replica:resume', '--json', '--progress', 'json'], { env });
      expect(second.code, second.stderr).toBe(0);
      const start = second.stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((e) => e.type === 'start');
      expect(start.resumed_parts).toBeGreaterThanOrEqual(4);
      expect(JSON.parse(second.stdout).sha256).toBe(sha(bytes));
      // Both replicas see the one completed build.
      const rows = await queryDatabase(url, "SELECT complete FROM builds WHERE image_tag = 'replica:resume'");
      expect(rows).toEqual([{ complete: 1 }]);
    } finally {
      await stopReplica(slow);
    }
  });

  it('an upload whose completing replica was killed is completed by the next complete, through the other', async () => {
    // A replica of its own, so killing it leaves a and b serving; each part it assembles takes a minute more, so it
    // is killed in the middle however fast the machine (160 parts were relied on to take long enough, and did not
    // always: its complete answered before the kill).
    const doomed = await serve([...replicaArgs(), '--faults', 'assembly-delay=60s']);
    const body = crypto.randomBytes(4 * PART);
    const created = await fetch(`${doomed.info.endpoint}/cloud/games/${doomed.info.game_id}/builds`, {
      method: 'POST',
      headers: { authorization: `Bearer ${doomed.info.tokens.cloud}`, 'content-type': 'application/json' },
      body: JSON.stringify({ display_name: 'Doomed', image_tag: 'replica:doomed', image_file: { path: 'x.tar', content_length: body.length } }),
    }).then((r) => r.json() as Promise<{ upload_id: string; image_presigned_requests: { url: string; byte_offset: number; content_length: number }[] }>);
    for (const req of created.image_presigned_requests) {
      const put = await fetch(req.url, { method: 'PUT', body: body.subarray(req.byte_offset, req.byte_offset + req.content_length) });
      expect(put.status).toBe(200);
    }
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    try {
      const state = async () => (await watcher.query('SELECT state FROM uploads WHERE upload_id = $1', [created.upload_id])).rows[0].state as string;
      // The doomed replica claims the upload and starts assembling; it is killed as soon as its claim is in the database.
      const completing = fetch(`${doomed.info.endpoint}/cloud/uploads/${created.upload_id}/complete`, {
        method: 'POST',
        headers: { authorization: `Bearer ${doomed.info.tokens.cloud}`, 'content-type': 'application/json' },
        body: '{}',
      }).catch((err: unknown) => err);
      while ((await state()) === 'pending');
      doomed.child.kill('SIGKILL');
      await doomed.exit;
      expect(await completing).toBeInstanceOf(Error);
      expect(await state()).toBe('assembling');
    } finally {
      await watcher.end();
    }
    const complete = () =>
      fetch(`${b.info.endpoint}/cloud/uploads/${created.upload_id}/complete`, {
        method: 'POST',
        headers: { authorization: `Bearer ${b.info.tokens.cloud}`, 'content-type': 'application/json' },
        body: '{}',
      });
    // The dead replica's claim is still fresh: the other replica answers at once, 429 with Retry-After, never waits.
    const busy = await complete();
    expect(busy.status).toBe(429);
    expect(busy.headers.get('retry-after')).toBe('1');
    expect(((await busy.json()) as { code: string }).code).toBe('UPLOAD_COMPLETE_IN_PROGRESS');
    // Unrefreshed, it lapses in seconds (real time, waited for here): a later complete takes it over and finishes.
    let done = busy;
    for (const deadline = Date.now() + 30_000; done.status === 429 && Date.now() < deadline; ) {
      await new Promise((resolve) => setTimeout(resolve, Number(done.headers.get('retry-after')) * 1000));
      done = await complete();
    }
    expect(done.status, await done.text()).toBe(200);
    const [row] = await queryDatabase(url, 'SELECT b.complete, b.sha256, u.state FROM builds b JOIN uploads u USING (upload_id) WHERE u.upload_id = $1', [created.upload_id]);
    expect(row).toEqual({ complete: 1, sha256: sha(body), state: 'complete' });
  });

  it('a game created through one serves its job through the other; deleted through one, its tokens are 401 on both', async () => {
    const created = await runCli(['emulator', 'game', 'create', '--ttl', '1h', '--name', 'ci-job', '--json'], { env: cliEnv(a) });
    expect(created.code).toBe(0);
    const game = JSON.parse(created.stdout) as { game_id: string; namespace_id: string; tokens: { cloud: string; public: string } };
    const jobOn = (r: Replica): Record<string, string> => ({
      ...cliEnv(r),
      GAMEHOST_TOKEN: game.tokens.cloud,
      GAMEHOST_NAMESPACE_TOKEN: game.tokens.public,
      GAMEHOST_GAME: game.game_id,
      GAMEHOST_NAMESPACE: game.namespace_id,
    });
    const lobby = await runCli(['lobby', 'create', '--game-mode', 'squads', '--json'], { env: jobOn(b) });
    expect(lobby.code).toBe(0);
    await admit(a.info.endpoint, JSON.parse(lobby.stdout));
    const stats = await runCli(['stats', '--json'], { env: jobOn(a) });
    expect(stats.code).toBe(0);
    expect(JSON.parse(stats.stdout).player_count).toBe(1);
    const listed = await runCli(['emulator', 'game', 'list', '--json'], { env: cliEnv(b) });
    expect(JSON.parse(listed.stdout).games.map((g: { game_id: string }) => g.game_id)).toContain(game.game_id);

    const deleted = await runCli(['emulator', 'game', 'delete', game.game_id], { env: cliEnv(a) });
    expect(deleted.code).toBe(0);
    // No replica keeps the game: the other reads its row on each request and finds it gone.
    for (const r of [b, a]) {
      const refused = await runCli(['stats'], { env: jobOn(r) });
      expect(refused.code).toBe(3);
      expect(refused.stderr).toMatch(/deleted or has expired/);
    }
    expect((await runCli(['emulator', 'game', 'delete', game.game_id], { env: cliEnv(b) })).code).toBe(4);
    // Its row stays, its deletion begun, until the second purge a sweep does minutes later.
    expect(await queryDatabase(url, 'SELECT delete_ts IS NOT NULL AS deleting FROM games WHERE game_id = $1', [game.game_id])).toEqual([{ deleting: true }]);
    expect(await queryDatabase(url, 'SELECT lobby_id FROM lobbies WHERE namespace_id = $1', [game.namespace_id])).toEqual([]);
  });

  it('answers health on both; SIGTERM lets a request in flight finish, then exits 0', async () => {
    for (const r of [a, b]) {
      const res = await fetch(`${r.info.endpoint}/_emulator/health`);
      expect(res.status).toBe(200);
    }
    const slow = await serve([...replicaArgs(), '--faults', 'latency=600ms']);
    // The SIGTERM goes once the server holds the request: its "100 Continue" says it has read the headers and
    // handed the request on (a fixed wait lost the race on a loaded machine: the signal came before the request).
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    const body = JSON.stringify({ game_mode: 'default' });
    const headers = { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(body)), expect: '100-continue' };
    const inFlight = new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = http.request(`${slow.info.endpoint}/matchmaker/lobbies/create`, { method: 'POST', headers }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.once('end', () => resolve({ status: res.statusCode!, body: text }));
      });
      req.once('error', reject);
      req.once('continue', () => {
        req.end(body);
        held();
      });
      req.flushHeaders();
    });
    await holding;
    slow.child.kill('SIGTERM');
    const res = await inFlight;
    expect(res.status).toBe(200);
    const lobbyId = (JSON.parse(res.body) as { lobby: { lobby_id: string } }).lobby.lobby_id;
    expect(await slow.exit).toEqual({ code: 0, signal: null });
    // Its lobby is in the database, and it no longer accepts connections.
    expect(await queryDatabase(url, 'SELECT lobby_id FROM lobbies WHERE lobby_id = $1', [lobbyId])).toHaveLength(1);
    await expect(fetch(`${slow.info.endpoint}/_emulator/health`)).rejects.toThrow();
  });
});
