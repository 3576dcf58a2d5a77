// The data directory's assembly of a build from its parts, met directly: what a refused assembly leaves behind.
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, writeFileSync } from 'node:fs';
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

it('an assembly refused at a part it has written leaves no temp file and nothing unhandled, however the disk is paced', async () => {
  const root = tempDir('gamehost-blobs-');
  const paths = { root, db: join(root, 'db'), secret: join(root, 'secret'), uploads: join(root, 'uploads'), builds: join(root, 'builds') };
  mkdirSync(paths.builds, { recursive: true });
  const blobs = new LocalBlobStore(paths, Buffer.alloc(32), index);
  const sha = (b: Buffer) => createHash('sha256').update(b).digest('hex');
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
