// The CLI end to end against `emulator serve --bucket` (SQLite for the records) on moto_server, the S3 server
// with ListParts and S3's multipart rules: pushes whose parts go straight to the bucket, resume after a kill,
// complete refusing a missing or short part by name, a part changed under a completion, an export fetched with a
// presigned GetObject, and a refused create leaving no multipart upload behind. One moto_server and one emulator
// process for the file.
import { spawn, type ChildProcess } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EmulatorError } from '../../src/emulator/errors.js';
import { S3BlobStore } from '../../src/emulator/stores/s3-blobs.js';
import { isolatedEnv, runCli, tempDir } from '../helpers/cli.js';
import { listBuilds } from '../helpers/emulator.js';
import { BUCKET, CREDENTIALS, MOTO_PRESENT, bucketAt, createBucket, s3, startMoto, type S3Server } from '../helpers/s3.js';
import { BIN } from '../helpers/bin.js';

const MiB = 1024 * 1024;
const PART = 5 * MiB;
const sha = (b: Buffer | string) => crypto.createHash('sha256').update(b).digest('hex');

function writeRandom(file: string, size: number): Buffer {
  const data = crypto.randomBytes(size);
  fs.writeFileSync(file, data);
  return data;
}

function events(stderr: string): Record<string, any>[] {
  return stderr.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
}

/** Runs the real executable; resolves on its first stdout line (or once `ready` holds for its stderr events). */
function spawnCli(args: string[], env: Record<string, string | undefined>) {
  const child: ChildProcess = spawn(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH, ...env } as NodeJS.ProcessEnv, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  const exit = new Promise<number | null>((resolve) => child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))));
  child.stdout!.on('data', (c) => (out += c));
  const lines = readline.createInterface({ input: child.stderr! });
  lines.on('line', (l) => (err += l + '\n'));
  return { child, exit, stdout: () => out, stderr: () => err, lines };
}

/** The presigned URL's query, with what must and must not be signed into it. */
function expectHostOnlySignature(raw: string, moto: string, expires: string): URL {
  const url = new URL(raw);
  expect(url.origin).toBe(moto);
  expect(url.searchParams.get('X-Amz-Algorithm')).toBe('AWS4-HMAC-SHA256');
  expect(url.searchParams.get('X-Amz-SignedHeaders')).toBe('host');
  expect(url.searchParams.get('X-Amz-Expires')).toBe(expires);
  // The AWS SDK since 3.729 signs x-amz-checksum-crc32 of an empty body into such URLs unless told not to;
  // real buckets then refuse the real body, and no test server checks it. Nothing of the kind may be in ours.
  expect([...url.searchParams.keys()].filter((k) => /checksum|content-sha256/i.test(k))).toEqual([]);
  return url;
}

describe.skipIf(!MOTO_PRESENT)('emulator serve --bucket on moto_server', () => {
  let moto: S3Server;
  let serve: ReturnType<typeof spawnCli>;
  let info: { endpoint: string; game_id: string; namespace_id: string; tokens: { cloud: string; public: string } };
  let env: Record<string, string | undefined>;
  const dir = tempDir();

  beforeAll(async () => {
    moto = await startMoto();
    await createBucket(moto.endpoint);
    serve = spawnCli(['emulator', 'serve', '--port', '0', '--data-dir', path.join(dir, 'emu'), '--bucket', `s3://${BUCKET}/ci`, '--part-size', '5MiB', '--json'], {
      ...CREDENTIALS,
      AWS_ENDPOINT_URL: moto.endpoint,
      GAMEHOST_EMULATOR_CONFIG: '',
    });
    const line = await new Promise<string>((resolve, reject) => {
      serve.child.stdout!.once('data', (c) => resolve(String(c)));
      void serve.exit.then((code) => reject(new Error(`emulator serve exited ${code}: ${serve.stderr()}`)));
    });
    info = JSON.parse(line);
    env = {
      ...isolatedEnv(),
      GAMEHOST_ENDPOINT: info.endpoint,
      GAMEHOST_TOKEN: info.tokens.cloud,
      GAMEHOST_NAMESPACE_TOKEN: info.tokens.public,
      GAMEHOST_GAME: info.game_id,
      GAMEHOST_NAMESPACE: info.namespace_id,
    };
  }, 30_000);

  afterAll(async () => {
    serve?.child.kill('SIGTERM');
    await serve?.exit;
    await moto?.close();
  });

  const api = (p: string, body: unknown) =>
    fetch(`${info.endpoint}${p}`, { method: 'POST', headers: { authorization: `Bearer ${info.tokens.cloud}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const createBuild = async (tag: string, size: number) => {
    const res = await api(`/cloud/games/${info.game_id}/builds`, { display_name: tag, image_tag: tag, image_file: { path: 'x.tar', content_length: size } });
    return { status: res.status, json: (await res.json()) as any };
  };
  const complete = async (uploadId: string) => {
    const res = await api(`/cloud/uploads/${uploadId}/complete`, {});
    return { status: res.status, json: (await res.json()) as any };
  };
  const put = (url: string, body: Buffer) => fetch(url, { method: 'PUT', body });

  it('answers presigned UploadPart URLs signed for the host alone, and pushes a small file as one part in-process', async () => {
    const created = await createBuild('urls:v1', 2 * PART + 1);
    expect(created.status).toBe(200);
    const urls = created.json.image_presigned_requests.map((r: { url: string }) => r.url);
    expect(urls).toHaveLength(3);
    urls.forEach((raw: string, i: number) => {
      const url = expectHostOnlySignature(raw, moto.endpoint, '21600');
      expect(url.pathname).toBe(`/${BUCKET}/ci/builds/${created.json.build_id}`);
      expect(url.searchParams.get('partNumber')).toBe(String(i + 1));
      expect(url.searchParams.get('uploadId')).toBeTruthy();
    });

    const file = path.join(dir, 'small.tar');
    const data = writeRandom(file, 300 * 1024);
    const r = await runCli(['build', 'push', file, '--tag', 'small:v1', '--json'], { env });
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({ sha256: sha(data), parts: 1 });
    const build = (await listBuilds(info.endpoint)).find((b) => b.image_tag === 'small:v1');
    expect(build).toMatchObject({ complete: true, sha256: sha(data) });
    // Read back as `--run-build` reads a build for docker load: the object's bytes, streamed.
    const blobs = new S3BlobStore(bucketAt(moto.endpoint, 'ci/'));
    const chunks: Buffer[] = [];
    for await (const chunk of await blobs.readBuild(build!)) chunks.push(chunk as Buffer);
    expect(sha(Buffer.concat(chunks))).toBe(sha(data));
    // An object that is not the size pushed (replaced in the bucket since) is refused before a byte is read.
    await expect(blobs.readBuild({ ...build!, content_length: data.length + 1 })).rejects.toThrow(`${data.length} bytes where ${data.length + 1} were pushed`);
  });

  it('a multipart push killed with SIGKILL is finished by the next run, parts straight to the bucket, the object the file', async () => {
    const file = path.join(dir, 'killed.tar');
    const data = writeRandom(file, 2 * PART + 1000);
    const first = spawnCli(['build', 'push', file, '--tag', 'killed:v1', '--concurrency', '1', '--limit-rate', '20MiB', '--progress', 'json'], env);
    await new Promise<void>((resolve, reject) => {
      first.lines.on('line', (l) => l.startsWith('{') && JSON.parse(l).type === 'part' && resolve());
      void first.exit.then((code) => reject(new Error(`exited ${code} before a part was up: ${first.stderr()}`)));
    });
    first.child.kill('SIGKILL');
    await first.exit;
    const doneBefore = events(first.stderr()).filter((e) => e.type === 'part').length;

    const second = spawnCli(['build', 'push', file, '--tag', 'killed:v1', '--json', '--progress', 'json'], env);
    expect(await second.exit).toBe(0);
    const ev = events(second.stderr());
    const start = ev.find((e) => e.type === 'start')!;
    expect(start.resumed_parts).toBeGreaterThanOrEqual(doneBefore);
    expect(ev.filter((e) => e.type === 'part').length).toBe(3 - start.resumed_parts);
    const result = JSON.parse(second.stdout());
    expect(result).toMatchObject({ sha256: sha(data), parts: 3, bytes: data.length });
    expect((await listBuilds(info.endpoint)).filter((b) => b.image_tag === 'killed:v1')).toMatchObject([{ complete: true, sha256: sha(data) }]);
    // The bytes are in the bucket under the prefix, and the multipart upload's bookkeeping is gone.
    const object = await s3(moto.endpoint, 'GET', `ci/builds/${result.build_id}`);
    expect(sha(Buffer.from(await object.arrayBuffer()))).toBe(sha(data));
    expect((await s3(moto.endpoint, 'GET', `ci/uploads/${result.upload_id}`)).status).toBe(404);
  });

  it('complete reads the parts from the bucket: a missing or short part is UPLOAD_INVALID naming it', async () => {
    const data = crypto.randomBytes(PART + 1000);
    const created = await createBuild('gaps:v1', data.length);
    const reqs = created.json.image_presigned_requests as { url: string; byte_offset: number; content_length: number }[];
    const body = (i: number) => data.subarray(reqs[i]!.byte_offset, reqs[i]!.byte_offset + reqs[i]!.content_length);
    expect((await put(reqs[1]!.url, body(1))).status).toBe(200);

    const missing = await complete(created.json.upload_id);
    expect(missing.status).toBe(400);
    expect(missing.json).toMatchObject({ code: 'UPLOAD_INVALID', metadata: { part_number: 1 } });
    expect(missing.json.message).toContain('part 1 of 2 is missing');

    // S3 takes any length for an UploadPart; complete holds it to the plan.
    expect((await put(reqs[0]!.url, body(0).subarray(0, MiB))).status).toBe(200);
    const short = await complete(created.json.upload_id);
    expect(short.json).toMatchObject({ code: 'UPLOAD_INVALID', metadata: { part_number: 1 } });
    expect(short.json.message).toContain(`part 1 of 2 has ${MiB} bytes; expected ${PART}`);

    expect((await put(reqs[0]!.url, body(0))).status).toBe(200);
    expect(await complete(created.json.upload_id)).toMatchObject({ status: 200, json: {} });
    expect((await listBuilds(info.endpoint)).find((b) => b.image_tag === 'gaps:v1')).toMatchObject({ complete: true, sha256: sha(data) });
  });

  it('a part sent again after it was listed is named when the bucket refuses the completion (InvalidPart)', async () => {
    const blobs = new S3BlobStore(bucketAt(moto.endpoint, 'store/'));
    const upload = { upload_id: crypto.randomUUID(), build_id: crypto.randomUUID(), content_length: PART + 10, part_size: PART, part_count: 2 };
    const row = { ...upload, game_id: 'g', state: 'assembling' as const, claim_ts: 0 };
    const urls = await blobs.openUpload('', upload, Date.now(), Date.now() + 60_000);
    const first = crypto.randomBytes(PART);
    const last = crypto.randomBytes(10);
    await put(urls[0]!, first);
    await put(urls[1]!, last);
    const listed = await blobs.receivedParts(upload);
    expect([...listed.values()].map((p) => p.size)).toEqual([PART, 10]);

    const changed = crypto.randomBytes(PART);
    await put(urls[0]!, changed);
    const refused = await blobs.assemble(row, listed, async () => {}).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(EmulatorError);
    expect(refused).toMatchObject({ code: 'UPLOAD_INVALID', metadata: { part_number: 1 } });

    // Listed again, it completes with the bytes now there; done once more (a replica that died before recording
    // it), the whole object is recognised and hashed again.
    const whole = sha(Buffer.concat([changed, last]));
    expect(await blobs.assemble(row, await blobs.receivedParts(upload), async () => {})).toBe(whole);
    expect(await blobs.assemble(row, await blobs.receivedParts(upload), async () => {})).toBe(whole);
  });

  it('a create refused for its tag aborts the multipart upload it opened', async () => {
    const uploads = async () => (await (await s3(moto.endpoint, 'GET', '?uploads&prefix=ci/')).text()).match(/<UploadId>/g)?.length ?? 0;
    expect((await createBuild('taken:v1', MiB)).status).toBe(200);
    const before = await uploads();
    const refused = await createBuild('taken:v1', MiB);
    expect(refused.json.code).toBe('BUILD_TAG_TAKEN');
    expect(await uploads()).toBe(before);
  });

  it('exports history as a CSV in the bucket, downloaded through a presigned GetObject', async () => {
    expect((await runCli(['lobby', 'create', '--game-mode', 'default', '-q'], { env })).code).toBe(0);
    const urlOnly = await runCli(['history', 'export', '--since', '1h', '--url-only'], { env });
    expect(urlOnly.code).toBe(0);
    const url = expectHostOnlySignature(urlOnly.stdout.trim(), moto.endpoint, '3600');
    expect(url.pathname).toMatch(new RegExp(`^/${BUCKET}/ci/exports/${info.game_id}/[0-9a-f-]{36}\\.csv$`));

    const out = path.join(dir, 'history.csv');
    const r = await runCli(['history', 'export', '--since', '1h', '-o', out], { env });
    expect(r.code).toBe(0);
    const csv = fs.readFileSync(out, 'utf8');
    expect(csv.split('\n')[0]).toMatch(/^lobby_id,namespace_id,/);
    expect(csv.trim().split('\n').length).toBeGreaterThanOrEqual(2);
  });
});
