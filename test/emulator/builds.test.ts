import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { openDatabase } from '../../src/emulator/stores/sqlite-driver.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { GAME_ID } from '../../src/emulator/index.js';
import { presignPath } from '../../src/emulator/stores/presign.js';
import { expectErrorShape, startTestEmulator, storedBuild, type TestEmulator, UUID_RE } from '../helpers/emulator.js';

// Tiny parts so multipart behaviour shows with a few bytes.
const PART = 10;
let t: TestEmulator;
const built = (buildId: string) => storedBuild(t, buildId);
beforeAll(async () => {
  t = await startTestEmulator({ partSize: PART, singlePartMax: 20, maxUploadBytes: 1_000_000 });
});
afterAll(async () => {
  await t.stop();
});

let tagCounter = 0;
const nextTag = () => `game:v${++tagCounter}`;

function buildBody(contentLength: number, over: Record<string, unknown> = {}) {
  return {
    display_name: 'Build One',
    image_tag: nextTag(),
    image_file: { path: 'image.tar', content_type: 'application/x-tar', content_length: contentLength },
    kind: 'oci_bundle',
    compression: 'lz4',
    multipart_upload: true,
    ...over,
  };
}

const createBuild = (body: unknown, token: string | null = t.tokens.cloud, game = GAME_ID) =>
  t.call('POST', `/cloud/games/${game}/builds`, { token, body });

const put = (url: string, data: Buffer, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'PUT', body: data, headers }).then(async (r) => ({
    status: r.status,
    headers: r.headers,
    text: await r.text(),
  }));

const complete = (uploadId: string, token: string | null = t.tokens.cloud) =>
  t.call('POST', `/cloud/uploads/${uploadId}/complete`, { token, body: {} });

async function adminBuild(buildId: string) {
  const res = await t.call('GET', '/_emulator/builds');
  return res.json.builds.find((b: { build_id: string }) => b.build_id === buildId);
}

describe('POST /cloud/games/{game_id}/builds', () => {
  it('a file below singlePartMax gets one presigned request', async () => {
    const body = buildBody(15);
    const res = await createBuild(body);
    expect(res.status).toBe(200);
    expect(res.json.build_id).toMatch(UUID_RE);
    expect(res.json.upload_id).toMatch(UUID_RE);
    expect(res.json.image_presigned_request).toBeUndefined();
    expect(res.json.image_presigned_requests).toHaveLength(1);
    const [req] = res.json.image_presigned_requests;
    expect(req).toEqual({ path: 'image.tar', url: expect.any(String), byte_offset: 0, content_length: 15 });
    const url = new URL(req.url);
    expect(url.origin).toBe(t.endpoint);
    expect(url.pathname).toBe(`/_upload/${res.json.upload_id}/1`);
    // A single PUT is valid for one hour.
    const expires = Number(url.searchParams.get('expires'));
    expect(expires - Date.now()).toBeGreaterThan(59 * 60_000);
    expect(expires - Date.now()).toBeLessThanOrEqual(60 * 60_000);

    const listed = await adminBuild(res.json.build_id);
    expect(listed).toEqual({
      build_id: res.json.build_id,
      image_tag: body.image_tag,
      display_name: 'Build One',
      kind: 'oci_bundle',
      compression: 'lz4',
      content_length: 15,
      sha256: null,
      complete: false,
      create_ts: expect.stringMatching(/Z$/),
    });
  });

  it('a larger file is cut in parts of partSize, the last shorter, valid for 6 hours', async () => {
    const res = await createBuild(buildBody(35));
    const reqs = res.json.image_presigned_requests;
    expect(reqs.map((r: any) => [r.byte_offset, r.content_length])).toEqual([
      [0, 10],
      [10, 10],
      [20, 10],
      [30, 5],
    ]);
    expect(reqs.map((r: any) => new URL(r.url).pathname.split('/').pop())).toEqual(['1', '2', '3', '4']);
    const expires = Number(new URL(reqs[0].url).searchParams.get('expires'));
    expect(expires - Date.now()).toBeGreaterThan(5.9 * 3600_000);
  });

  it('defaults kind docker_image and compression none', async () => {
    const res = await createBuild({ display_name: 'x', image_tag: nextTag(), image_file: { path: 'a', content_length: 1 } });
    expect(res.status).toBe(200);
    const listed = await adminBuild(res.json.build_id);
    expect(listed.kind).toBe('docker_image');
    expect(listed.compression).toBe('none');
  });

  it('an empty file is one zero-length part', async () => {
    const res = await createBuild(buildBody(0));
    expect(res.json.image_presigned_requests).toEqual([
      { path: 'image.tar', url: expect.any(String), byte_offset: 0, content_length: 0 },
    ]);
    const putRes = await put(res.json.image_presigned_requests[0].url, Buffer.alloc(0));
    expect(putRes.status).toBe(200);
    expect((await complete(res.json.upload_id)).status).toBe(200);
    expect((await adminBuild(res.json.build_id)).sha256).toBe(createHash('sha256').digest('hex'));
  });

  it('allows exactly 10,000 parts and refuses more', async () => {
    const ok = await createBuild(buildBody(10_000 * PART));
    expect(ok.status).toBe(200);
    expect(ok.json.image_presigned_requests).toHaveLength(10_000);
    expectErrorShape(await createBuild(buildBody(10_000 * PART + 1)), 400, 'UPLOAD_TOO_LARGE');
  });

  describe('validation', () => {
    const cases: [string, Record<string, unknown>, string][] = [
      ['empty display_name', { display_name: '' }, 'BUILD_INVALID_DISPLAY_NAME'],
      ['display_name over 128 bytes', { display_name: 'é'.repeat(65) }, 'BUILD_INVALID_DISPLAY_NAME'],
      ['leading space', { display_name: ' Build' }, 'BUILD_INVALID_DISPLAY_NAME'],
      ['trailing space', { display_name: 'Build ' }, 'BUILD_INVALID_DISPLAY_NAME'],
      ['doubled space', { display_name: 'My  Build' }, 'BUILD_INVALID_DISPLAY_NAME'],
      ['missing display_name', { display_name: undefined }, 'API_BAD_BODY'],
      ['tag without colon', { image_tag: 'game' }, 'BUILD_INVALID_IMAGE_TAG'],
      ['tag with two colons', { image_tag: 'a:b:c' }, 'BUILD_INVALID_IMAGE_TAG'],
      ['uppercase tag', { image_tag: 'Game:v1' }, 'BUILD_INVALID_IMAGE_TAG'],
      ['tag part starting with -', { image_tag: 'game:-v1' }, 'BUILD_INVALID_IMAGE_TAG'],
      ['tag part ending with -', { image_tag: 'game-:v1' }, 'BUILD_INVALID_IMAGE_TAG'],
      ['empty tag part', { image_tag: 'game:' }, 'BUILD_INVALID_IMAGE_TAG'],
      ['bad kind', { kind: 'vm' }, 'API_BAD_BODY'],
      ['bad compression', { compression: 'gzip' }, 'API_BAD_BODY'],
      ['missing image_file', { image_file: undefined }, 'API_BAD_BODY'],
      ['negative content_length', { image_file: { path: 'a', content_length: -1 } }, 'API_BAD_BODY'],
      ['fractional content_length', { image_file: { path: 'a', content_length: 1.5 } }, 'API_BAD_BODY'],
      ['empty path', { image_file: { path: '', content_length: 1 } }, 'UPLOAD_INVALID'],
      ['content_length at the limit', { image_file: { path: 'a', content_length: 1_000_000 } }, 'UPLOAD_TOO_LARGE'],
    ];
    it.each(cases)('%s → 400 %s', async (_name, over, code) => {
      expectErrorShape(await createBuild(buildBody(5, over)), 400, code);
    });

    it('accepts tags with digits, _ and inner -, and a 128-byte display name', async () => {
      expect((await createBuild(buildBody(5, { image_tag: 'my_game-2:v1-0_a' }))).status).toBe(200);
      expect((await createBuild(buildBody(5, { display_name: 'x'.repeat(128) }))).status).toBe(200);
    });

    it('an image tag is unique per game', async () => {
      const body = buildBody(5);
      expect((await createBuild(body)).status).toBe(200);
      const again = await createBuild({ ...body, display_name: 'Other' });
      expect(expectErrorShape(again, 400, 'BUILD_TAG_TAKEN').message).toContain(body.image_tag);
    });
  });

  describe('auth', () => {
    it('401 without a token, 403 with a namespace token or for another game', async () => {
      expectErrorShape(await createBuild(buildBody(5), null), 401, 'API_UNAUTHORIZED');
      expectErrorShape(await createBuild(buildBody(5), t.tokens.public), 403, 'API_FORBIDDEN');
      expectErrorShape(
        await createBuild(buildBody(5), t.tokens.cloud, '12345678-1234-4234-8234-123456789abc'),
        403,
        'API_FORBIDDEN',
      );
      expectErrorShape(await createBuild(buildBody(5), t.tokens.cloud, 'game'), 400, 'API_BAD_PATH_PARAMETER');
    });
  });
});

describe('presigned PUT and complete', () => {
  const file = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz!'); // 37 bytes: parts 10,10,10,7

  it('parts in any order, a re-sent part, then complete assembles the file', async () => {
    const res = await createBuild(buildBody(file.length));
    const { build_id: buildId, upload_id: uploadId, image_presigned_requests: reqs } = res.json;
    expect(reqs).toHaveLength(4);
    const slice = (r: any) => file.subarray(r.byte_offset, r.byte_offset + r.content_length);

    // Part 2 first gets wrong bytes of the right size, then is re-sent: the last write wins.
    expect((await put(reqs[1].url, Buffer.alloc(10, 120))).status).toBe(200);
    for (const i of [3, 1, 0, 2]) {
      const r = await put(reqs[i].url, slice(reqs[i]));
      expect(r.status).toBe(200);
      expect(r.headers.get('etag')).toBe(`"${createHash('sha256').update(slice(reqs[i])).digest('hex')}"`);
    }
    const done = await complete(uploadId);
    expect(done.status).toBe(200);
    expect(done.json).toEqual({});

    // Kept as its parts, moved into place: builds/<build_id>/part-<n>.
    expect(readdirSync(join(t.dataDir, 'builds', buildId)).sort()).toEqual(['part-1', 'part-2', 'part-3', 'part-4']);
    expect((await built(buildId)).equals(file)).toBe(true);
    expect(existsSync(join(t.dataDir, 'uploads', uploadId))).toBe(false);
    const listed = await adminBuild(buildId);
    expect(listed.complete).toBe(true);
    expect(listed.sha256).toBe(createHash('sha256').update(file).digest('hex'));
    expect(listed.content_length).toBe(37);

    // Completing again is a no-op 200; a part after completion is refused.
    expect((await complete(uploadId)).status).toBe(200);
    expectErrorShape(await toCall(put(reqs[0].url, slice(reqs[0]))), 400, 'UPLOAD_INVALID');
  });

  it('a single-part upload completes and is hashed', async () => {
    const small = Buffer.from('tiny image');
    const res = await createBuild(buildBody(small.length));
    expect((await put(res.json.image_presigned_requests[0].url, small)).status).toBe(200);
    expect((await complete(res.json.upload_id)).status).toBe(200);
    expect(statSync(join(t.dataDir, 'builds', res.json.build_id)).isFile()).toBe(true);
    expect((await built(res.json.build_id)).equals(small)).toBe(true);
    expect((await adminBuild(res.json.build_id)).sha256).toBe(createHash('sha256').update(small).digest('hex'));
  });

  it('complete with a missing part → 400 UPLOAD_INVALID naming the part', async () => {
    const res = await createBuild(buildBody(file.length));
    const reqs = res.json.image_presigned_requests;
    for (const i of [0, 1, 3]) await put(reqs[i].url, file.subarray(reqs[i].byte_offset, reqs[i].byte_offset + reqs[i].content_length));
    const done = await complete(res.json.upload_id);
    const body = expectErrorShape(done, 400, 'UPLOAD_INVALID');
    expect(body.message).toContain('part 3 of 4 is missing');
    expect(body.metadata).toEqual({ part_number: 3 });
    expect((await adminBuild(res.json.build_id)).complete).toBe(false);
  });

  it('PUT with the wrong Content-Length → 400 UPLOAD_INVALID', async () => {
    const res = await createBuild(buildBody(file.length));
    const r = await toCall(put(res.json.image_presigned_requests[0].url, Buffer.alloc(9)));
    expect(expectErrorShape(r, 400, 'UPLOAD_INVALID').message).toContain('must be 10 bytes');
  });

  it('PUT with chunked encoding → 400 UPLOAD_INVALID', async () => {
    const res = await createBuild(buildBody(file.length));
    const stream = new ReadableStream({
      start(c) {
        c.enqueue(new Uint8Array(10));
        c.close();
      },
    });
    const r = await fetch(res.json.image_presigned_requests[0].url, {
      method: 'PUT',
      body: stream,
      duplex: 'half',
    } as RequestInit);
    expect(r.status).toBe(400);
    expect(((await r.json()) as { code: string }).code).toBe('UPLOAD_INVALID');
  });

  it('PUT with a tampered signature or URL → 403 PRESIGN_INVALID', async () => {
    const res = await createBuild(buildBody(file.length));
    const url = new URL(res.json.image_presigned_requests[0].url);
    const badSig = new URL(url);
    badSig.searchParams.set('sig', url.searchParams.get('sig')!.replace(/^./, (c) => (c === 'A' ? 'B' : 'A')));
    expectErrorShape(await toCall(put(badSig.href, file.subarray(0, 10))), 403, 'PRESIGN_INVALID');
    const laterExpiry = new URL(url);
    laterExpiry.searchParams.set('expires', String(Number(url.searchParams.get('expires')) + 1000));
    expectErrorShape(await toCall(put(laterExpiry.href, file.subarray(0, 10))), 403, 'PRESIGN_INVALID');
    // The signature of part 1 does not open part 2.
    const otherPart = new URL(url);
    otherPart.pathname = otherPart.pathname.replace(/\/1$/, '/2');
    expectErrorShape(await toCall(put(otherPart.href, file.subarray(10, 20))), 403, 'PRESIGN_INVALID');
    const noSig = new URL(url);
    noSig.search = '';
    expectErrorShape(await toCall(put(noSig.href, file.subarray(0, 10))), 403, 'PRESIGN_INVALID');
  });

  it('PUT with an expired URL → 403 PRESIGN_EXPIRED', async () => {
    const res = await createBuild(buildBody(file.length));
    const path = presignPath(t.secret, 'PUT', `/_upload/${res.json.upload_id}/1`, Date.now() - 1000);
    const r = await toCall(put(t.endpoint + path, file.subarray(0, 10)));
    expectErrorShape(r, 403, 'PRESIGN_EXPIRED');
  });

  it('PUT to an unknown upload → 404', async () => {
    const path = presignPath(t.secret, 'PUT', '/_upload/12345678-1234-4234-8234-123456789abc/1', Date.now() + 60_000);
    expectErrorShape(await toCall(put(t.endpoint + path, Buffer.alloc(1))), 404, 'API_NOT_FOUND');
  });

  it('complete: 401 without a token, 403 with a namespace token, 404 for an unknown upload', async () => {
    const res = await createBuild(buildBody(3));
    expectErrorShape(await complete(res.json.upload_id, null), 401, 'API_UNAUTHORIZED');
    expectErrorShape(await complete(res.json.upload_id, t.tokens.dev), 403, 'API_FORBIDDEN');
    expectErrorShape(await complete('12345678-1234-4234-8234-123456789abc'), 404, 'API_NOT_FOUND');
  });

  it('a complete that meets a live claim is answered at once (429, Retry-After), and a claim whose holder is gone lapses within seconds', async () => {
    const res = await createBuild(buildBody(3));
    await put(res.json.image_presigned_requests[0].url, Buffer.from('abc'));
    // Another process claimed the upload to assemble it, as the database of a shared data directory shows.
    const db = openDatabase(join(t.dataDir, 'emulator.db'), { timeout: 5000 });
    const claim = db.prepare("UPDATE uploads SET state = 'assembling', claim_ts = ? WHERE upload_id = ?");
    try {
      claim.run(Date.now(), res.json.upload_id);
      const started = performance.now();
      const busy = await complete(res.json.upload_id);
      expect(performance.now() - started).toBeLessThan(1000);
      const body = expectErrorShape(busy, 429, 'UPLOAD_COMPLETE_IN_PROGRESS');
      expect(body.message).toBe(`Another completion of upload ${res.json.upload_id} is in progress; ask again in a moment.`);
      expect(busy.headers.get('retry-after')).toBe('1');
      // Its holder stopped refreshing it 6 s ago: gone. The claim is taken over and the upload assembled.
      claim.run(Date.now() - 6_000, res.json.upload_id);
      expect((await complete(res.json.upload_id)).status).toBe(200);
      expect((await adminBuild(res.json.build_id)).complete).toBe(true);
    } finally {
      db.close();
    }
  });

  it("an unexpected failure answers 500 ERROR naming the ray, the operator's log has the error, and the server keeps serving", async () => {
    const res = await createBuild(buildBody(3));
    await put(res.json.image_presigned_requests[0].url, Buffer.from('abc'));
    // Pull the builds directory away so assembling fails in a way no handler expects.
    rmSync(join(t.dataDir, 'builds'), { recursive: true });
    const stderr = vi.spyOn(console, 'error').mockImplementation(() => {});
    try {
      const done = await complete(res.json.upload_id);
      const body = expectErrorShape(done, 500, 'ERROR');
      expect(body.message).toContain(body.ray_id);
      // The client is told the ray alone; the operator, the ray and what failed.
      expect(body.message).not.toContain(t.dataDir);
      expect(stderr.mock.calls.map((c) => String(c[0]))).toContainEqual(expect.stringMatching(new RegExp(`^\\[emulator\\] internal error \\(ray ${body.ray_id}\\): .*builds`)));
    } finally {
      stderr.mockRestore();
      const { mkdirSync } = await import('node:fs');
      mkdirSync(join(t.dataDir, 'builds'), { mode: 0o700 });
    }
    // The claim was released: completing now works.
    expect((await complete(res.json.upload_id)).status).toBe(200);
    expect(readdirSync(join(t.dataDir, 'builds'))).toContain(res.json.build_id);
  });
});

/** Adapts a raw PUT result to the helper's Call shape. */
async function toCall(p: Promise<{ status: number; headers: Headers; text: string }>) {
  const r = await p;
  return { ...r, json: r.text ? JSON.parse(r.text) : undefined };
}

describe('complete verifies the parts it assembles', () => {
  const file = Buffer.from('abcdefghijklmnopqrstuvwxyz0123456789?!'); // 38 bytes: parts 10,10,10,8
  const slice = (r: any) => file.subarray(r.byte_offset, r.byte_offset + r.content_length);

  async function uploadAll() {
    const res = await createBuild(buildBody(file.length));
    const reqs = res.json.image_presigned_requests;
    for (const r of reqs) expect((await put(r.url, slice(r))).status).toBe(200);
    return { buildId: res.json.build_id as string, uploadId: res.json.upload_id as string, reqs };
  }

  it('a part cut short on disk since its PUT → UPLOAD_INVALID with its size', async () => {
    const { buildId, uploadId } = await uploadAll();
    writeFileSync(join(t.dataDir, 'uploads', uploadId, 'part-2'), Buffer.alloc(4));
    const body = expectErrorShape(await complete(uploadId), 400, 'UPLOAD_INVALID');
    expect(body.message).toContain('part 2 of 4 has 4 bytes; expected 10');
    expect(body.metadata).toEqual({ part_number: 2 });
    expect((await adminBuild(buildId)).complete).toBe(false);
  });

  it('a part whose bytes changed since its PUT → UPLOAD_INVALID naming it; sending it again mends the upload', async () => {
    const { buildId, uploadId, reqs } = await uploadAll();
    writeFileSync(join(t.dataDir, 'uploads', uploadId, 'part-3'), Buffer.alloc(10, 0x2a));
    const body = expectErrorShape(await complete(uploadId), 400, 'UPLOAD_INVALID');
    expect(body.message).toContain('part 3 of 4 does not match the bytes uploaded for it');
    expect(body.metadata).toEqual({ part_number: 3 });
    expect(existsSync(join(t.dataDir, 'builds', buildId))).toBe(false);
    // The failed assembly let go of the upload: the part is accepted again and complete succeeds.
    expect((await put(reqs[2].url, slice(reqs[2]))).status).toBe(200);
    expect((await complete(uploadId)).status).toBe(200);
    expect((await built(buildId)).equals(file)).toBe(true);
  });

  it('a build put in place by a process that died before recording it (its parts moved) is completed by the next complete', async () => {
    // What this gamehost leaves: the upload's directory moved to builds/ (several parts), or its one part moved there.
    for (const single of [false, true]) {
      const bytes = single ? Buffer.from('one part') : file;
      const res = await createBuild(buildBody(bytes.length));
      for (const r of res.json.image_presigned_requests) expect((await put(r.url, bytes.subarray(r.byte_offset, r.byte_offset + r.content_length))).status).toBe(200);
      const uploads = join(t.dataDir, 'uploads', res.json.upload_id);
      if (single) renameSync(join(uploads, 'part-1'), join(t.dataDir, 'builds', res.json.build_id));
      else renameSync(uploads, join(t.dataDir, 'builds', res.json.build_id));
      const done = await complete(res.json.upload_id);
      expect(done.status, JSON.stringify(done.json)).toBe(200);
      expect(await adminBuild(res.json.build_id)).toMatchObject({ complete: true, sha256: createHash('sha256').update(bytes).digest('hex') });
      expect((await built(res.json.build_id)).equals(bytes)).toBe(true);
      expect(existsSync(uploads)).toBe(false);
    }
  });

  it('one whose parts a complete was taking back when its process died (some back in uploads/, some still in place) is completed from both', async () => {
    const res = await createBuild(buildBody(file.length));
    for (const r of res.json.image_presigned_requests) expect((await put(r.url, slice(r))).status).toBe(200);
    const uploads = join(t.dataDir, 'uploads', res.json.upload_id);
    const placed = join(t.dataDir, 'builds', res.json.build_id);
    renameSync(uploads, placed);
    mkdirSync(uploads);
    for (const n of [1, 3]) renameSync(join(placed, `part-${n}`), join(uploads, `part-${n}`));
    const done = await complete(res.json.upload_id);
    expect(done.status, JSON.stringify(done.json)).toBe(200);
    expect(await adminBuild(res.json.build_id)).toMatchObject({ complete: true, sha256: createHash('sha256').update(file).digest('hex') });
    expect(readdirSync(placed).sort()).toEqual(['part-1', 'part-2', 'part-3', 'part-4']);
    expect((await built(res.json.build_id)).equals(file)).toBe(true);
  });

  it('one that a gamehost before schema version 22 wrote as one file (its parts removed, all or some) is completed too, and kept as its parts', async () => {
    for (const all of [false, true]) {
      const res = await createBuild(buildBody(file.length));
      for (const r of res.json.image_presigned_requests) expect((await put(r.url, slice(r))).status).toBe(200);
      writeFileSync(join(t.dataDir, 'builds', res.json.build_id), file);
      rmSync(join(t.dataDir, 'uploads', res.json.upload_id, 'part-2'));
      if (all) rmSync(join(t.dataDir, 'uploads', res.json.upload_id), { recursive: true });
      const done = await complete(res.json.upload_id);
      expect(done.status, JSON.stringify(done.json)).toBe(200);
      expect(await adminBuild(res.json.build_id)).toMatchObject({ complete: true, sha256: createHash('sha256').update(file).digest('hex') });
      expect(statSync(join(t.dataDir, 'builds', res.json.build_id)).isDirectory()).toBe(true);
      expect((await built(res.json.build_id)).equals(file)).toBe(true);
    }
  });

  it('such a build whose bytes are not the parts uploaded is refused, naming the part; sending the part again mends it', async () => {
    const { buildId, uploadId, reqs } = await uploadAll();
    const changed = Buffer.from(file);
    changed[25] = 0x2a; // in part 3
    writeFileSync(join(t.dataDir, 'builds', buildId), changed);
    rmSync(join(t.dataDir, 'uploads', uploadId), { recursive: true });
    const body = expectErrorShape(await complete(uploadId), 400, 'UPLOAD_INVALID');
    expect(body.metadata).toEqual({ part_number: 3 });
    expect((await adminBuild(buildId)).complete).toBe(false);
    // The part sent again replaces the one taken from the build; the others are as they were taken.
    expect((await put(reqs[2].url, slice(reqs[2]))).status).toBe(200);
    expect((await complete(uploadId)).status).toBe(200);
    expect((await built(buildId)).equals(file)).toBe(true);
    expect((await adminBuild(buildId)).sha256).toBe(createHash('sha256').update(file).digest('hex'));
  });

  it('a single-part upload changed on disk is refused the same way', async () => {
    const small = Buffer.from('one part');
    const res = await createBuild(buildBody(small.length));
    await put(res.json.image_presigned_requests[0].url, small);
    writeFileSync(join(t.dataDir, 'uploads', res.json.upload_id, 'part-1'), Buffer.from('ONE PART'));
    const body = expectErrorShape(await complete(res.json.upload_id), 400, 'UPLOAD_INVALID');
    expect(body.metadata).toEqual({ part_number: 1 });
  });

  it('a part whose body is still arriving when complete begins is refused in one line, not a 5xx; the build is what complete hashed', async () => {
    for (const single of [false, true]) {
      const bytes = single ? Buffer.from('one part') : file;
      const res = await createBuild(buildBody(bytes.length));
      const reqs = res.json.image_presigned_requests;
      for (const r of reqs) expect((await put(r.url, bytes.subarray(r.byte_offset, r.byte_offset + r.content_length))).status).toBe(200);
      // The last part PUT again: its headers and half its body, then complete, then the rest.
      const last = reqs.at(-1);
      const url = new URL(last.url);
      const socket = connect(Number(url.port), url.hostname);
      let answer = '';
      socket.setEncoding('utf8').on('data', (d: string) => (answer += d));
      const closed = new Promise((resolve) => socket.on('close', resolve));
      socket.write(`PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: ${last.content_length}\r\nConnection: close\r\n\r\n`);
      socket.write(Buffer.alloc(2, 0x2a));
      // Its temp file is open beside the parts: the body is being written.
      await vi.waitFor(() => expect(readdirSync(join(t.dataDir, 'uploads', res.json.upload_id)).some((name) => name.includes('.tmp-'))).toBe(true));
      expect((await complete(res.json.upload_id)).status).toBe(200);
      socket.write(Buffer.alloc(last.content_length - 2, 0x2a));
      await closed;
      expect(answer).toMatch(/^HTTP\/1\.1 400 /);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toMatchObject({ code: 'UPLOAD_INVALID', message: expect.stringContaining('the upload is already complete.') });
      expect((await built(res.json.build_id)).equals(bytes)).toBe(true);
      expect(await adminBuild(res.json.build_id)).toMatchObject({ complete: true, sha256: createHash('sha256').update(bytes).digest('hex') });
      // Nothing of the late part is left: not in the build, not in uploads/.
      if (!single) expect(readdirSync(join(t.dataDir, 'builds', res.json.build_id)).sort()).toEqual(['part-1', 'part-2', 'part-3', 'part-4']);
      expect(existsSync(join(t.dataDir, 'uploads', res.json.upload_id))).toBe(false);
    }
  });

  it('a PUT whose body ends before its Content-Length is not kept', async () => {
    const res = await createBuild(buildBody(file.length));
    const url = new URL(res.json.image_presigned_requests[0].url);
    // Promise 10 bytes, send 4, hang up: what a crashed uploader leaves behind.
    await new Promise<void>((resolve, reject) => {
      const socket = connect(Number(url.port), url.hostname, () => {
        socket.end(`PUT ${url.pathname}${url.search} HTTP/1.1\r\nHost: ${url.host}\r\nContent-Length: 10\r\n\r\nabcd`);
      });
      socket.on('error', reject);
      socket.on('close', () => resolve());
      socket.resume();
    });
    const body = expectErrorShape(await complete(res.json.upload_id), 400, 'UPLOAD_INVALID');
    expect(body.message).toContain('part 1 of 4 is missing');
    // The server cleans up after the hang-up on its own schedule.
    await vi.waitFor(() => expect(readdirSync(join(t.dataDir, 'uploads', res.json.upload_id))).toEqual([]));
  });
});
