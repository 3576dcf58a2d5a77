// The data directory's assembly of a build from its parts, met directly: what a refused assembly leaves behind, and
// the bytes it writes while the disk is slow to take them.
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { LocalBlobStore } from '../../src/emulator/stores/local-blobs.js';
import type { LocalObjectIndex, ReceivedPart, UploadRow } from '../../src/emulator/stores/store.js';
import { tempDir } from '../helpers/cli.js';

// The index is not what is tested here: assemble() is handed the parts' records.
const index: LocalObjectIndex = {
  recordPart: async () => {},
  listParts: async () => [],
  insertExport: async () => {},
  getExport: async () => undefined,
};

const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');

function dataDir() {
  const root = tempDir('gamehost-blobs-');
  const paths = { root, db: join(root, 'db'), secret: join(root, 'secret'), uploads: join(root, 'uploads'), builds: join(root, 'builds') };
  mkdirSync(paths.builds, { recursive: true });
  return { paths, blobs: new LocalBlobStore(paths, Buffer.alloc(32), index) };
}

it('an assembly refused at a part it has written leaves no temp file and nothing unhandled, however the disk is paced', async () => {
  const { paths, blobs } = dataDir();
  // Small parts: each is one write the loop does not wait for, so the refusal can come while it is in flight.
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
  // Past the refusals' own callbacks: an error a destroyed stream emits late would surface here.
  await new Promise((resolve) => setTimeout(resolve, 50));
  expect(readdirSync(paths.builds)).toEqual([]);
});

/** Four parts of several reads each (the assembly reads 4 MiB at a time), the last one short, in a data directory. */
function fourParts() {
  const { paths, blobs } = dataDir();
  const data = randomBytes(3 * 9 * 1024 * 1024 + 12_345);
  const partSize = 9 * 1024 * 1024;
  const upload: UploadRow = { upload_id: 'u', build_id: 'b', game_id: 'g', content_length: data.length, part_size: partSize, part_count: 4, state: 'assembling', claim_ts: null };
  const parts = new Map<number, ReceivedPart>();
  mkdirSync(join(paths.uploads, 'u'), { recursive: true });
  for (let n = 1; n <= 4; n++) {
    const bytes = data.subarray((n - 1) * partSize, n * partSize);
    writeFileSync(join(paths.uploads, 'u', `part-${n}`), bytes);
    parts.set(n, { size: bytes.length, etag: sha(bytes) });
  }
  return { paths, blobs, data, upload, parts };
}

/** Runs `body` with every FileHandle write going through `write` (given the real one and its call's arguments). */
async function withWrites<T>(write: (real: (...args: unknown[]) => Promise<unknown>, args: unknown[], call: number) => Promise<unknown>, body: () => Promise<T>): Promise<T> {
  const handle = await open(join(tempDir(), 'probe'), 'w');
  const proto = Object.getPrototypeOf(handle) as { write: (...args: unknown[]) => Promise<unknown> };
  await handle.close();
  const real = proto.write;
  let calls = 0;
  proto.write = function (this: unknown, ...args: unknown[]) {
    return write((...a: unknown[]) => real.apply(this, a), args, ++calls);
  };
  try {
    return await body();
  } finally {
    proto.write = real;
  }
}

it('the build is the parts byte for byte when each write of the assembly is slow: no buffer is read into while it is written', async () => {
  const { paths, blobs, data, upload, parts } = fourParts();
  // Every write takes its bytes from the buffer 20 ms late, as a busy disk's would.
  const digest = await withWrites(
    async (real, args) => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      return real(...args);
    },
    () => blobs.assemble(upload, parts, async () => {}),
  );
  expect(digest).toBe(sha(data));
  expect(readFileSync(join(paths.builds, 'b')).equals(data)).toBe(true);
});

it('a write of the assembly that fails (a full disk) is its error, with no temp file left and nothing unhandled', async () => {
  const { paths, blobs, upload, parts } = fourParts();
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  try {
    // The third write fails at once, while the next block is being read: nothing awaits it until the write after it.
    const full = Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
    const failed = withWrites(
      async (real, args, call) => {
        if (call === 3) throw full;
        return real(...args);
      },
      () => blobs.assemble(upload, parts, async () => {}),
    );
    await expect(failed).rejects.toBe(full);
    await new Promise((resolve) => setTimeout(resolve, 50));
  } finally {
    process.off('unhandledRejection', onUnhandled);
  }
  expect(unhandled).toEqual([]);
  expect(readdirSync(paths.builds)).toEqual([]);
});
