// The bucket store on s3rver, which checks presigned URLs' expiry and answers S3's 403 XML as S3 does (it has no
// ListParts, so completions are tested on moto_server in bucket.test.ts): a push and an export whose URLs were
// signed long enough ago fail with the bucket's own words; a fresh export downloads; the emulator's own presigned
// routes are not there. And `emulator serve --bucket` refusing, in one line, what cannot work.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { endpointEnv } from '../helpers/emulator.js';
import { bucketAt, startS3rver, type S3Server } from '../helpers/s3.js';

const HOUR = 3_600_000;

// One s3rver for the file.
let shared: Promise<S3Server> | undefined;
const startS3rverOnce = () => (shared ??= startS3rver());
afterAll(async () => (await shared)?.close());

describe('presigned bucket URLs on s3rver', () => {
  let server: S3Server;
  let late: RunningEmulator;
  let now: RunningEmulator;
  const dir = tempDir();

  beforeAll(async () => {
    server = await startS3rverOnce();
    const bucket = bucketAt(server.endpoint, 'expiry/');
    const config = { startDelayMs: 0, readyDelayMs: 0 };
    // Its clock is 7 hours behind: everything it signs has expired (6 h for parts, 1 h for exports).
    late = await startEmulator({ dataDir: tempDir(), bucket, config, clock: new ManualClock(Date.now() - 7 * HOUR) });
    now = await startEmulator({ dataDir: tempDir(), bucket, config });
  });

  afterAll(async () => {
    await late?.close();
    await now?.close();
  });

  it('a push whose part URL expired fails on the bucket 403, saying it expired, exit 7', async () => {
    const file = path.join(dir, 'late.tar');
    fs.writeFileSync(file, crypto.randomBytes(64 * 1024));
    const r = await runCli(['build', 'push', file, '--tag', 'late:v1'], { env: { ...isolatedEnv(), ...endpointEnv(late) } });
    expect(r.code).toBe(7);
    expect(r.stderr).toMatch(/403 AccessDenied: Request has expired/);
  });

  it('an export downloads through a presigned GetObject, and fails with 403 once its URL expired', async () => {
    const env = { ...isolatedEnv(), ...endpointEnv(now) };
    expect((await runCli(['lobby', 'create', '--game-mode', 'duos', '-q'], { env })).code).toBe(0);
    const r = await runCli(['history', 'export', '--since', '1h', '--format', 'csv', '-o', '-'], { env });
    expect(r.code).toBe(0);
    expect(r.stdout.split('\n')[0]).toMatch(/^lobby_id,namespace_id,/);
    expect(r.stdout).toContain(',duos,');

    const expired = await runCli(['history', 'export', '--since', '1h', '-o', '-'], { env: { ...isolatedEnv(), ...endpointEnv(late) } });
    expect(expired.code).not.toBe(0);
    expect(expired.stderr).toMatch(/403 AccessDenied: Request has expired/);
  });

  it("a lobby's log export is a stdout.txt in the bucket, fetched through a presigned GetObject", async () => {
    const created = await fetch(`${now.endpoint}/matchmaker/lobbies/create`, {
      method: 'POST',
      headers: { authorization: `Bearer ${now.tokens.public}`, 'content-type': 'application/json' },
      body: JSON.stringify({ game_mode: 'duos' }),
    });
    const lobbyId = ((await created.json()) as { lobby: { lobby_id: string } }).lobby.lobby_id;
    await now.services.logs.append(lobbyId, 'std_out', [Buffer.from('first'), Buffer.from('second')]);
    const res = await fetch(`${now.endpoint}/cloud/games/${now.gameId}/matchmaker/lobbies/${lobbyId}/logs/export`, {
      method: 'POST',
      headers: { authorization: `Bearer ${now.tokens.cloud}`, 'content-type': 'application/json' },
      body: JSON.stringify({ stream: 'std_out' }),
    });
    expect(res.status).toBe(200);
    const { url } = (await res.json()) as { url: string };
    expect(url.startsWith(server.endpoint)).toBe(true);
    expect(new URL(url).pathname).toMatch(/\/stdout\.txt$/);
    const file = await fetch(url);
    expect(file.status).toBe(200);
    expect(await file.text()).toBe('first\nsecond\n');
  });

  it("answers 404 on the emulator's own part and export routes: the bucket serves those URLs", async () => {
    const id = crypto.randomUUID();
    const part = await fetch(`${now.endpoint}/_upload/${id}/1?expires=${Date.now() + HOUR}&sig=x`, { method: 'PUT', body: 'x' });
    expect(part.status).toBe(404);
    expect(((await part.json()) as { code: string }).code).toBe('API_NOT_FOUND');
    const csv = await fetch(`${now.endpoint}/_export/${id}/export.csv?expires=${Date.now() + HOUR}&sig=x`);
    expect(csv.status).toBe(404);
  });
});

describe('emulator serve --bucket refuses what cannot work, in one line', () => {
  const keys = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER' };
  const serve = (args: string[], env: Record<string, string>) =>
    runCli(['emulator', 'serve', '--port', '0', '--data-dir', tempDir(), ...args], { env: { ...isolatedEnv(), ...env } });

  it.each([
    ['no keys', ['--bucket', 's3://games'], {}, /^error: --bucket: a bucket needs credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY$/m],
    ['not an s3:// URL', ['--bucket', 'games'], keys, /^error: --bucket: "games" is not an s3:\/\/bucket\[\/prefix\] URL$/m],
    ['parts below 5 MiB', ['--bucket', 's3://games', '--part-size', '1MiB'], keys, /^error: --bucket: a bucket takes parts of 5 MiB to 5 GiB/m],
    ['GAMEHOST_EMULATOR_BUCKET read as the flag', [], { ...keys, GAMEHOST_EMULATOR_BUCKET: 's3://G' }, /^error: --bucket: "G" is not a bucket name/m],
  ])('%s: usage error, exit 2', async (_name, args, env, message) => {
    const r = await serve(args, env);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(message);
  });

  it('a bucket that does not answer: exit 1 naming it and the reason', async () => {
    const r = await serve(['--bucket', 's3://missing-bucket/x'], { ...keys, AWS_ENDPOINT_URL: (await startS3rverOnce()).endpoint });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/^error: the bucket s3:\/\/missing-bucket\/x\/ at http:\/\/127\.0\.0\.1:\d+ does not exist \(S3 HEAD s3:\/\/missing-bucket\/: 404 NotFound/m);
    expect(r.stderr).not.toContain('    at ');
  });
});
