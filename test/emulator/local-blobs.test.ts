// The data directory's parts and builds, met directly: parts PUT through writePart (put()), what a refused assembly
// leaves behind, the build it keeps (its parts, moved into place, or copied across filesystems) read back.
import { createHash, randomBytes } from 'node:crypto';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { buffer } from 'node:stream/consumers';
import { expect, it } from 'vitest';
import { LocalBlobStore } from '../../src/emulator/stores/local-blobs.js';
import type { LocalObjectIndex, PartRow, ReceivedPart, UploadRow } from '../../src/emulator/stores/store.js';
import { tempDir } from '../helpers/cli.js';

// For the store that is handed its parts' records (the first test); put() gives one an index that keeps them.
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

/**
 * `data` PUT in parts of `partSize` bytes through writePart, into a data directory whose builds/ is `builds` (when
 * given), each part recorded as the store records it: its size, digest and what identified its file then.
 */
async function put(data: Buffer, partSize: number, builds?: string) {
  const { paths } = dataDir();
  if (builds !== undefined) {
    rmSync(paths.builds, { recursive: true });
    symlinkSync(builds, paths.builds);
  }
  const records = new Map<number, PartRow>();
  const recording: LocalObjectIndex = {
    ...index,
    recordPart: async (_upload, n, size, sha256, stamp) => void records.set(n, { part_number: n, size, sha256, stamp }),
    listParts: async () => [...records.values()].sort((a, b) => a.part_number - b.part_number),
  };
  const blobs = new LocalBlobStore(paths, Buffer.alloc(32), recording);
  const count = Math.ceil(data.length / partSize);
  const upload: UploadRow = { upload_id: 'u', build_id: 'b', game_id: 'g', content_length: data.length, part_size: partSize, part_count: count, state: 'assembling', claim_ts: null };
  for (let n = 1; n <= count; n++) {
    const bytes = data.subarray((n - 1) * partSize, n * partSize);
    const body = (async function* () {
      yield bytes;
    })();
    expect(await blobs.writePart('u', n, bytes.length, body, T0)).toMatchObject({ size: bytes.length, etag: sha(bytes) });
  }
  const assemble = async () => blobs.assemble(upload, await blobs.receivedParts(upload), async () => {});
  return { paths, blobs, upload, records, assemble, part: (n: number) => join(paths.uploads, 'u', `part-${n}`) };
}

it('a build of several parts is kept as them, read back whole and in order (part 10 after part 9); nothing is copied', async () => {
  const data = randomBytes(11 * 1000 + 7);
  const { paths, blobs, upload, assemble } = await put(data, 1000);
  expect(upload.part_count).toBe(12);
  const inode = statSync(join(paths.uploads, 'u', 'part-10')).ino;
  expect(await assemble()).toBe(sha(data));
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
  const data = randomBytes(3 * 9 * 1024 * 1024 + 12_345);
  const { paths, blobs, upload, assemble } = await put(data, 9 * 1024 * 1024);
  expect(upload.part_count).toBe(4);
  expect(await assemble()).toBe(sha(data));
  expect(statSync(join(paths.builds, 'b')).isDirectory()).toBe(true);
  expect((await buffer(await blobs.readBuild({ build_id: 'b', content_length: data.length }))).equals(data)).toBe(true);
});

it("a part's file as it was when it arrived is hashed once, for the build; one written since is hashed again and refused", async () => {
  const data = randomBytes(3 * 1000);

  // Untouched since: the build is the parts, its digest theirs.
  let s = await put(data, 1000);
  expect(s.records.get(2)!.stamp).toMatch(/^\d+:\d+:1000:\d+$/);
  expect(await s.assemble()).toBe(sha(data));

  // Not hashed again: a record whose digest is not the file's (only a second hash would see it) is not looked at.
  s = await put(data, 1000);
  s.records.get(2)!.sha256 = sha(Buffer.alloc(1000));
  expect(await s.assemble()).toBe(sha(data));

  // Written in place since, its size the same: hashed again, and refused, naming it. (Later than the kernel's
  // timestamp tick, a few ms, as any edit after an arrival is: within one, a file's time would not move.)
  s = await put(data, 1000);
  await new Promise((resolve) => setTimeout(resolve, 20));
  const changed = Buffer.from(data.subarray(1000, 2000));
  changed[0]! ^= 0xff;
  writeFileSync(s.part(2), changed);
  await expect(s.assemble()).rejects.toMatchObject({ code: 'UPLOAD_INVALID', metadata: { part_number: 2 } });

  // Another file of the same bytes in its place: hashed again, and taken.
  s = await put(data, 1000);
  rmSync(s.part(2));
  writeFileSync(s.part(2), data.subarray(1000, 2000));
  expect(await s.assemble()).toBe(sha(data));

  // A record of a store before schema version 23 (no stamp): hashed again too.
  s = await put(data, 1000);
  for (const r of s.records.values()) r.stamp = null;
  s.records.get(3)!.sha256 = sha(Buffer.alloc(1000));
  await expect(s.assemble()).rejects.toMatchObject({ code: 'UPLOAD_INVALID', metadata: { part_number: 3 } });
});

it('a part PUT again while its upload is assembled never changes the build: the bytes kept are the digest answered', async () => {
  const data = randomBytes(3 * 1000);
  const s = await put(data, 1000);
  // A PUT of part 2 still arriving as the assembly begins: its temp file beside the parts.
  writeFileSync(join(s.paths.uploads, 'u', 'part-2.tmp-in-flight'), 'half a part');
  let read = 0;
  const digest = await s.blobs.assemble(s.upload, await s.blobs.receivedParts(s.upload), async () => {
    // Once part 2 has been read, another PUT of it lands (its body sent before the completion began).
    if (++read === 2) {
      const late = randomBytes(1000);
      await s.blobs.writePart('u', 2, late.length, (async function* () {
        yield late;
      })(), T0);
    }
  });
  const kept = await buffer(await s.blobs.readBuild({ build_id: 'b', content_length: data.length }));
  expect(sha(kept)).toBe(digest);
  expect(kept.equals(data)).toBe(true);
  expect(readdirSync(join(s.paths.builds, 'b')).sort()).toEqual(['part-1', 'part-2', 'part-3']);
});

// Another filesystem than the temp directory's, where this machine has one (Linux's /dev/shm is tmpfs).
const OTHER_FS = ['/dev/shm'].find((dir) => {
  try {
    return statSync(dir).dev !== statSync(tempDir()).dev;
  } catch {
    return false;
  }
});

it.skipIf(OTHER_FS === undefined)('builds/ on another filesystem than uploads/ (a link to another disk): parts are copied where a rename cannot go, nothing left behind', async () => {
  const data = randomBytes(3 * 1000 + 5);
  const other = mkdtempSync(join(OTHER_FS!, 'gamehost-builds-'));
  try {
    // Several parts: the upload's directory, copied into place.
    let s = await put(data, 1000, other);
    expect(await s.assemble()).toBe(sha(data));
    expect(readdirSync(join(other, 'b')).sort()).toEqual(['part-1', 'part-2', 'part-3', 'part-4']);
    expect(readdirSync(s.paths.uploads)).toEqual([]);
    expect(readdirSync(other)).toEqual(['b']);
    expect((await buffer(await s.blobs.readBuild({ build_id: 'b', content_length: data.length }))).equals(data)).toBe(true);

    // Put in place by a process that died before recording it, then taken back part by part, across, and kept again.
    rmSync(join(other, 'b'), { recursive: true });
    s = await put(data, 1000, other);
    cpSync(join(s.paths.uploads, 'u'), join(other, 'b'), { recursive: true });
    rmSync(join(s.paths.uploads, 'u'), { recursive: true });
    expect(await s.assemble()).toBe(sha(data));
    expect(readdirSync(s.paths.uploads)).toEqual([]);
    expect(readdirSync(other)).toEqual(['b']);
    expect((await buffer(await s.blobs.readBuild({ build_id: 'b', content_length: data.length }))).equals(data)).toBe(true);

    // One part: its file, copied into place.
    rmSync(join(other, 'b'), { recursive: true });
    s = await put(data.subarray(0, 700), 1000, other);
    expect(await s.assemble()).toBe(sha(data.subarray(0, 700)));
    expect(statSync(join(other, 'b')).isFile()).toBe(true);
    expect(readdirSync(s.paths.uploads)).toEqual([]);
    expect(readdirSync(other)).toEqual(['b']);
  } finally {
    rmSync(other, { recursive: true, force: true });
  }
});
