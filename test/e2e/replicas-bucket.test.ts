// Two real `gamehost emulator serve` processes on one PostgreSQL database and one bucket (moto_server), each with a
// data directory of its own, as replicas on two hosts: the records in the database, every byte in the bucket, and
// the CLI works across them (push, resume, lobbies, statistics, history).
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readCsv, runCli, tempDir } from '../helpers/cli.js';
import { createTestDatabase, PG_PRESENT, queryDatabase } from '../helpers/postgres.js';
import { replicaEnv, serve, SLOW, stopReplica, type Replica } from '../helpers/replica.js';
import { BUCKET, createBucket, CREDENTIALS, MOTO_PRESENT, s3, startMoto, type S3Server } from '../helpers/s3.js';
import { admit } from '../helpers/emulator.js';
import { BIN } from '../helpers/bin.js';

// The smallest part S3 takes for every part but the last.
const PART = 5 * 1024 * 1024;
const sha = (b: Buffer) => crypto.createHash('sha256').update(b).digest('hex');
const events = (stderr: string): Record<string, any>[] => stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));

describe.skipIf(!PG_PRESENT || !MOTO_PRESENT)('two emulator replicas on one PostgreSQL database and one bucket', SLOW, () => {
  let moto: S3Server;
  let url: string;
  let a: Replica;
  let b: Replica;
  const home = tempDir();
  const dirs = { a: tempDir(), b: tempDir() };
  const cliEnv = (r: Replica) => replicaEnv(home, r);
  const replica = (dataDir: string, extra: string[] = []) =>
    serve(['--database', url, '--bucket', `s3://${BUCKET}/replicas`, '--data-dir', dataDir, '--part-size', '5MiB', ...extra], {
      ...CREDENTIALS,
      AWS_ENDPOINT_URL: moto.endpoint,
    });

  beforeAll(async () => {
    moto = await startMoto();
    await createBucket(moto.endpoint);
    url = await createTestDatabase();
    [a, b] = await Promise.all([replica(dirs.a), replica(dirs.b)]);
  }, SLOW.timeout);
  afterAll(async () => {
    await Promise.all([stopReplica(a), stopReplica(b)]);
    await moto?.close();
  }, SLOW.timeout);

  it('say which stores they use, and hand out the same tokens', async () => {
    expect(a.info.stores).toEqual({ records: 'postgres', bytes: 's3' });
    expect(b.info.tokens).toEqual(a.info.tokens);
  });

  it('build push through one (multipart and single), listed complete through the other, the objects the files', async () => {
    const dir = tempDir();
    const multiBytes = crypto.randomBytes(2 * PART + 17);
    const singleBytes = crypto.randomBytes(1000);
    fs.writeFileSync(path.join(dir, 'multi.tar'), multiBytes);
    fs.writeFileSync(path.join(dir, 'single.tar'), singleBytes);
    const multi = await runCli(['build', 'push', path.join(dir, 'multi.tar'), '--tag', 'bucket:multi', '--json'], { env: cliEnv(a) });
    expect(multi.code, multi.stderr).toBe(0);
    expect(JSON.parse(multi.stdout)).toMatchObject({ parts: 3, sha256: sha(multiBytes) });
    const single = await runCli(['build', 'push', path.join(dir, 'single.tar'), '--tag', 'bucket:single', '--json'], { env: cliEnv(b) });
    expect(single.code, single.stderr).toBe(0);
    expect(JSON.parse(single.stdout)).toMatchObject({ parts: 1, sha256: sha(singleBytes) });

    const listed = JSON.parse((await runCli(['emulator', 'builds', '--json', '--endpoint', b.info.endpoint], { env: cliEnv(b) })).stdout);
    const byTag = Object.fromEntries(listed.builds.map((x: { image_tag: string }) => [x.image_tag, x]));
    expect(byTag['bucket:multi']).toMatchObject({ complete: true, sha256: sha(multiBytes), content_length: multiBytes.length });
    expect(byTag['bucket:single']).toMatchObject({ complete: true, sha256: sha(singleBytes) });
    for (const [result, bytes] of [[JSON.parse(multi.stdout), multiBytes], [JSON.parse(single.stdout), singleBytes]] as const) {
      const object = await s3(moto.endpoint, 'GET', `replicas/builds/${result.build_id}`);
      expect(sha(Buffer.from(await object.arrayBuffer()))).toBe(sha(bytes));
    }
  });

  it('a push killed half-way is resumed by the next run, sending only the missing parts; the other replica lists it', async () => {
    const file = path.join(tempDir(), 'resume.tar');
    const bytes = crypto.randomBytes(4 * PART);
    fs.writeFileSync(file, bytes);
    const child = spawn(process.execPath, [BIN, 'build', 'push', file, '--tag', 'bucket:resume', '--concurrency', '1', '--limit-rate', '40MiB', '--progress', 'json'], {
      env: { PATH: process.env.PATH, ...cliEnv(a) },
      stdio: ['ignore', 'ignore', 'pipe'],
    });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    let stderr = '';
    await new Promise<void>((resolve, reject) => {
      readline.createInterface({ input: child.stderr! }).on('line', (line) => {
        stderr += line + '\n';
        if (events(line).some((e) => e.type === 'part')) resolve();
      });
      void exited.then(() => reject(new Error(`the push ended before a part was up: ${stderr}`)));
    });
    child.kill('SIGKILL');
    await exited;

    // The CLI's journal is kept per endpoint: the next run goes to the same one, and the other replica lists the build.
    const second = await runCli(['build', 'push', file, '--tag', 'bucket:resume', '--json', '--progress', 'json'], { env: cliEnv(a) });
    expect(second.code, second.stderr).toBe(0);
    const seen = events(second.stderr);
    const start = seen.find((e) => e.type === 'start')!;
    expect(start.resumed_parts).toBeGreaterThanOrEqual(1);
    expect(seen.filter((e) => e.type === 'part')).toHaveLength(4 - start.resumed_parts);
    expect(JSON.parse(second.stdout)).toMatchObject({ sha256: sha(bytes), parts: 4 });
    expect(await queryDatabase(url, "SELECT complete, sha256 FROM builds WHERE image_tag = 'bucket:resume'")).toEqual([{ complete: 1, sha256: sha(bytes) }]);
    const listed = JSON.parse((await runCli(['emulator', 'builds', '--json', '--endpoint', b.info.endpoint], { env: cliEnv(b) })).stdout);
    expect(listed.builds.find((x: { image_tag: string }) => x.image_tag === 'bucket:resume')).toMatchObject({ complete: true, sha256: sha(bytes) });
  });

  it('a lobby created through one is read, counted and exported through the other; the export is read from the bucket', async () => {
    const created = await runCli(['lobby', 'create', '--game-mode', 'squads', '--json'], { env: cliEnv(a) });
    expect(created.code).toBe(0);
    const lobbyId = JSON.parse(created.stdout).lobby.lobby_id as string;
    const logs = await runCli(['lobby', 'logs', lobbyId, '--json'], { env: cliEnv(b) });
    expect(logs.code).toBe(0);
    expect(JSON.parse(logs.stdout).lobby.lobby_id).toBe(lobbyId);
    // Its server admits the creator's player through the other replica: counted by both.
    await admit(b.info.endpoint, JSON.parse(created.stdout));
    // One after the other: runCli checks that a run leaves no handle behind, which another run's would look like.
    const stats = [];
    for (const r of [a, b]) stats.push(JSON.parse((await runCli(['stats', '--json'], { env: cliEnv(r) })).stdout));
    expect(stats[1]).toEqual(stats[0]);
    expect(stats[0].game_modes.squads.player_count).toBe(1);

    const link = await runCli(['history', 'export', '--since', '1h', '--url-only'], { env: cliEnv(b) });
    expect(link.code, link.stderr).toBe(0);
    expect(new URL(link.stdout.trim()).origin).toBe(moto.endpoint);
    const exported = await runCli(['history', 'export', '--since', '1h', '-o', '-'], { env: cliEnv(a) });
    expect(exported.code).toBe(0);
    expect(readCsv(exported.stdout).some((row) => row[0] === lobbyId)).toBe(true);
  });

  it('after all that, no byte on either host: their data directories hold only each one saying it serves them', () => {
    for (const dir of [dirs.a, dirs.b]) {
      const files = fs.readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      expect(files.map((e) => path.relative(dir, path.join(e.parentPath, e.name)))).toEqual([expect.stringMatching(/^servers[/\\]\d+\.json$/)]);
    }
  });
});
