// LZ4 frame compression that streams: one frame of independent 64 KiB blocks, so an 8 GB build is compressed
// with flat memory. lz4-napi compresses whole buffers only; its block compressor and its own frame header
// are reused, and the frame is assembled here (magic, descriptor, sized blocks, end mark).
import fs from 'node:fs';
import { createRequire } from 'node:module';

type Lz4 = { compressSync(data: Buffer): Buffer; compressFrameSync(data: Buffer): Buffer };
const lz4 = (): Lz4 => createRequire(import.meta.url)('lz4-napi') as Lz4;

export const LZ4_MAGIC = Buffer.from([0x04, 0x22, 0x4d, 0x18]);
const BLOCK = 64 * 1024;
const UNCOMPRESSED = 0x8000_0000;

export async function startsWithLz4Magic(file: string): Promise<boolean> {
  const fd = await fs.promises.open(file, 'r');
  try {
    const head = Buffer.alloc(4);
    const { bytesRead } = await fd.read(head, 0, 4, 0);
    return bytesRead === 4 && head.equals(LZ4_MAGIC);
  } finally {
    await fd.close();
  }
}

/** Compresses `input` into `output` as one LZ4 frame (block-independent, 64 KiB blocks, no checksums). */
export async function compressFileLz4(input: string, output: string, signal?: AbortSignal): Promise<void> {
  const { compressSync, compressFrameSync } = lz4();
  // The frame descriptor for these settings, with its checksum byte, as lz4-napi itself writes it.
  const header = compressFrameSync(Buffer.alloc(0)).subarray(0, 7);
  const out = await fs.promises.open(output, 'w', 0o600);
  try {
    await out.write(header);
    let pending: Buffer = Buffer.alloc(0);
    const writeBlock = async (block: Buffer) => {
      const packed = compressSync(block).subarray(4); // lz4-napi prepends the uncompressed size
      const size = Buffer.alloc(4);
      if (packed.length >= block.length) {
        size.writeUInt32LE((block.length | UNCOMPRESSED) >>> 0);
        await out.write(Buffer.concat([size, block]));
      } else {
        size.writeUInt32LE(packed.length);
        await out.write(Buffer.concat([size, packed]));
      }
    };
    for await (const chunk of fs.createReadStream(input, { highWaterMark: 16 * BLOCK, signal })) {
      pending = pending.length ? Buffer.concat([pending, chunk as Buffer]) : (chunk as Buffer);
      let offset = 0;
      for (; pending.length - offset >= BLOCK; offset += BLOCK) await writeBlock(pending.subarray(offset, offset + BLOCK));
      pending = pending.subarray(offset);
    }
    if (pending.length) await writeBlock(pending);
    await out.write(Buffer.alloc(4)); // end mark
  } finally {
    await out.close();
  }
}
