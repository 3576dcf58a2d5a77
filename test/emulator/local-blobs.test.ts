// The data directory's assembly of a build from its parts, met directly: what a refused assembly leaves behind, and
// the build it keeps (its parts, moved into place) read back.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { expect, it } from 'vitest';
import { LocalBlobStore } from '../../src/emulator/stores/local-blobs.js';
import type { LocalObjectIndex, PartRow, ReceivedPart, UploadRow } from '../../src/emulator/stores/store.js';
import { tempDir } from '../helpers/cli.js';

// The index is not what is tested here: assemble() is handed the parts' records.
const index: LocalObjectIndex = {
  recordPart: async () => {},
  listParts: async () => [],
  insertExport: async () => {},
  getExport: async () => undefined,
};

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
const T0 = 1_763_000_000_000;

function dataDir() {
  const root = tempDir('gamehost-blobs-');
  const paths = { root, db: join(root, 'db'), secret: join(root, 'secret'), uploads: join(root, 'uploads'), builds: join(root, 'builds') };
  mkdirSync(paths.builds, { recursive: true });
  return { paths, blobs: new LocalBlobStore(paths, Buffer.alloc(32), index) };
}

it('an assembly refused at a part leaves nothing in builds/, its parts where they were, and nothing unhandled', async () => {
  const { paths, blobs } = dataDir();
  for (let i = 0; i < 200; i++) {
    const upload: UploadRow = { upload_id: `u${i}`, build_id: `b${i}`, game_id: 'g', content_length: 300, part_size: 100, part_count: 3, state: 'assembling', claim_ts: null };
    const parts = new Map<number, ReceivedPart>();
    mkdirSync(join(paths.uploads, upload.upload_id), { recursive: true });
    for (let n = 1; n <= 3; n++) {
      const bytes = Buffer.alloc(100, n);
      writeFileSync(join(paths.uploads, upload.upload_id, `part-${n}`), bytes);
      parts.set(n, { size: 100, etag: n === 3 ? sha(Buffer.alloc(100, 9)) : sha(bytes) });
    }
    await expect(blobs.assemble(upload, parts, async () => {})).rejects.toMatchObject({ code: 'UPLOAD_INVALID' });
  }
  // Past the refusals' own callbacks: an error a file left open emits late would surface here.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(readdirSync(paths.builds)).toEqual([]);
  expect(readdirSync(join(paths.uploads, 'u0')).sort()).toEqual(['part-1', 'part-2', 'part-3']);
});

/** `data` uploaded in parts of `partSize` bytes (the last one short) to a data directory, with their records. */
function uploaded(data: Buffer, partSize: number) {
  const { paths, blobs } = dataDir();
  const count = Math.ceil(data.length / partSize);
  const upload: UploadRow = { upload_id: 'u', build_id: 'b', game_id: 'g', content_length: data.length, part_size: partSize, part_count: count, state: 'assembling', claim_ts: null };
  const parts = new Map<number, ReceivedPart>();
  mkdirSync(join(paths.uploads, 'u'), { recursive: true });
  for (let n = 1; n <= count; n++) {
    const bytes = data.subarray((n - 1) * partSize, n * partSize);
    writeFileSync(join(paths.uploads, 'u', `part-${n}`), bytes);
    parts.set(n, { size: bytes.length, etag: sha(bytes) });
  }
  return { paths, blobs, data, upload, parts };
}

it('a build of several parts is kept as them, read back whole and in order (part 10 after part 9); nothing is copied', async () => {
  const { paths, blobs, data, upload, parts } = uploaded(randomBytes(11 * 1000 + 7), 1000);
  expect(upload.part_count).toBe(12);
  const inode = statSync(join(paths.uploads, 'u', 'part-10')).ino;
  expect(await blobs.assemble(upload, parts, async () => {})).toBe(sha(data));
  expect(readdirSync(paths.uploads)).toEqual([]);
  expect(statSync(join(paths.builds, 'b', 'part-10')).ino).toBe(inode);
  const build = { build_id: 'b', content_length: data.length };
  expect((await buffer(await blobs.readBuild(build))).equals(data)).toBe(true);
  // A build whose bytes are not all there is this call's error, not a short stream: its last part cut or gone (the
  // parts left are still numbered 1 to n), a part in the middle gone.
  truncateSync(join(paths.builds, 'b', 'part-12'), 6);
  await expect(blobs.readBuild(build)).rejects.toThrow(`${join(paths.builds, 'b')}: ${data.length - 1} bytes where ${data.length} were pushed`);
  rmSync(join(paths.builds, 'b', 'part-12'));
  await expect(blobs.readBuild(build)).rejects.toThrow(`${data.length - 7} bytes where ${data.length} were pushed`);
  rmSync(join(paths.builds, 'b', 'part-4'));
  await expect(blobs.readBuild(build)).rejects.toThrow("the build's parts are not all there");
  await expect(blobs.readBuild({ build_id: 'missing', content_length: 1 })).rejects.toMatchObject({ code: 'ENOENT' });
});

it('a large build of parts reads back byte for byte (4 MiB reads, parts that end inside one)', async () => {
  // Four parts of several reads each (the assembly reads 4 MiB at a time), the last one short.
  const { paths, blobs, data, upload, parts } = uploaded(randomBytes(3 * 9 * 1024 * 1024 + 12_345), 9 * 1024 * 1024);
  expect(upload.part_count).toBe(4);
  expect(await blobs.assemble(upload, parts, async () => {})).toBe(sha(data));
  expect(statSync(join(paths.builds, 'b')).isDirectory()).toBe(true);
  expect((await buffer(await blobs.readBuild({ build_id: 'b', content_length: data.length }))).equals(data)).toBe(true);
});

it("a part's file as it was when it arrived is hashed once, for the build; one written since is hashed again and refused", async () => {
  // The parts PUT through writePart, recorded with what identified each file as its bytes were hashed.
  const records = new Map<number, PartRow>();
  const recording: LocalObjectIndex = {
    ...index,
    recordPart: async (_upload, n, size, sha256, stamp) => void records.set(n, { part_number: n, size, sha256, stamp }),
    listParts: async () => [...records.values()].sort((a, b) => a.part_number - b.part_number),
  };
  const body = async function* (bytes: Buffer) {
    yield bytes;
  };
  const setUp = async (data: Buffer, partSize: number) => {
    const { paths } = dataDir();
    const blobs = new LocalBlobStore(paths, Buffer.alloc(32), recording);
    records.clear();
    const count = Math.ceil(data.length / partSize);
    const upload: UploadRow = { upload_id: 'u', build_id: 'b', game_id: 'g', content_length: data.length, part_size: partSize, part_count: count, state: 'assembling', claim_ts: null };
    for (let n = 1; n <= count; n++) {
      const bytes = data.subarray((n - 1) * partSize, n * partSize);
      expect(await blobs.writePart('u', n, bytes.length, body(bytes), T0)).toMatchObject({ size: bytes.length, etag: sha(bytes) });
    }
    return { paths, blobs, upload, part: (n: number) => join(paths.uploads, 'u', `part-${n}`) };
  };
  const data = randomBytes(3 * 1000);

  // Untouched since: the build is the parts, its digest theirs.
  let s = await setUp(data, 1000);
  expect(records.get(2)!.stamp).toMatch(/^\d+:\d+:1000:\d+$/);
  expect(await s.blobs.assemble(s.upload, await s.blobs.receivedParts(s.upload), async () => {})).toBe(sha(data));

  // Not hashed again: a record whose digest is not the file's (only a second hash would see it) is not looked at.
  s = await setUp(data, 1000);
  records.get(2)!.sha256 = sha(Buffer.alloc(1000));
  expect(await s.blobs.assemble(s.upload, await s.blobs.receivedParts(s.upload), async () => {})).toBe(sha(data));

  // Written in place since, its size the same: hashed again, and refused, naming it. (Later than the kernel's
  // timestamp tick, a few ms, as any edit after an arrival is: within one, a file's time would not move.)
  s = await setUp(data, 1000);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const changed = Buffer.from(data.subarray(1000, 2000));
  changed[0]! ^= 0xff;
  writeFileSync(s.part(2), changed);
  await expect(s.blobs.assemble(s.upload, await s.blobs.receivedParts(s.upload), async () => {})).rejects.toMatchObject({ code: 'UPLOAD_INVALID', metadata: { part_number: 2 } });

  // Another file of the same bytes in its place: hashed again, and taken.
  s = await setUp(data, 1000);
  rmSync(s.part(2));
  writeFileSync(s.part(2), data.subarray(1000, 2000));
  expect(await s.blobs.assemble(s.upload, await s.blobs.receivedParts(s.upload), async () => {})).toBe(sha(data));

  // A record of a store before schema version 23 (no stamp): hashed again too.
  s = await setUp(data, 1000);
  for (const r of records.values()) r.stamp = null;
  records.get(3)!.sha256 = sha(Buffer.alloc(1000));
  await expect(s.blobs.assemble(s.upload, await s.blobs.receivedParts(s.upload), async () => {})).rejects.toMatchObject({ code: 'UPLOAD_INVALID', metadata: { part_number: 3 } });
});
