// The bucket store's presigned URLs on s3rver, which checks their expiry and answers S3's 403 XML as S3 does
// (it has no ListParts, so completions are tested on moto_server in bucket.test.ts): a push and an export whose
// URLs were signed long enough ago fail with the bucket's own words; a fresh export downloads.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock, startEmulator, type RunningEmulator } from '../../src/emulator/index.js';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { endpointEnv } from '../helpers/emulator.js';
import { bucketAt, startS3rver, type S3Server } from '../helpers/s3.js';

const HOUR = 3_600_000;

describe('presigned bucket URLs on s3rver', () => {
  let server: S3Server;
  let late: RunningEmulator;
  let now: RunningEmulator;
  const dir = tempDir();

  beforeAll(async () => {
    server = await startS3rver();
    const bucket = bucketAt(server.endpoint, 'expiry/');
    const config = { startDelayMs: 0, readyDelayMs: 0 };
    // Its clock is 7 hours behind: everything it signs has expired (6 h for parts, 1 h for exports).
    late = await startEmulator({ dataDir: tempDir(), bucket, config, clock: new ManualClock(Date.now() - 7 * HOUR) });
    now = await startEmulator({ dataDir: tempDir(), bucket, config });
  });

  afterAll(async () => {
    await late?.close();
    await now?.close();
    await server?.close();
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
});
