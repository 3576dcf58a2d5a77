// LZ4 frame compression that streams: one frame of independent 64 KiB blocks, so an 8 GB build is compressed
// with flat memory. lz4-napi compresses whole buffers only; its block compressor and its own frame header
// are reused, and the frame is assembled here (magic, descriptor, sized blocks, end mark).
import fs from 'node:fs';
import { createRequire } from 'node:module';
import { readBuffer } from './read-buffer.js';

type Lz4 = {
  compressSync(data: Buffer): Buffer;
  compressFrameSync(data: Buffer): Buffer;
  uncompressSync(data: Buffer, dict?: Buffer): Buffer;
};
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
  const from = await fs.promises.open(input, 'r');
  try {
    const out = await fs.promises.open(output, 'w', 0o600);
    try {
      // One buffer read into again and again (see readBuffer), its whole blocks written out in one writev before
      // the next read; a partial block at its end moves to its start and waits for the rest.
      const buf = readBuffer(16 * BLOCK);
      const pieces: Buffer[] = [header];
      let filled = 0;
      for (;;) {
        signal?.throwIfAborted();
        const { bytesRead } = await from.read(buf, filled, buf.length - filled, null);
        filled += bytesRead;
        const last = bytesRead === 0;
        let at = 0;
        while (filled - at >= BLOCK || (last && filled > at)) {
          const block = buf.subarray(at, Math.min(filled, at + BLOCK));
          const packed = compressSync(block).subarray(4); // lz4-napi prepends the uncompressed size
          const size = Buffer.alloc(4);
          const stored = packed.length < block.length;
          size.writeUInt32LE(stored ? packed.length : (block.length | UNCOMPRESSED) >>> 0);
          pieces.push(size, stored ? packed : block);
          at += block.length;
        }
        if (last) pieces.push(Buffer.alloc(4)); // end mark
        if (pieces.length) await out.writev(pieces);
        pieces.length = 0;
        if (last) break;
        buf.copy(buf, 0, at, filled);
        filled -= at;
      }
    } finally {
      await out.close();
    }
  } finally {
    await from.close();
  }
}

/** A stream that is not an LZ4 frame this reader can undo; the message says what is wrong, for one line. */
export class Lz4FormatError extends Error {}

const BLOCK_MAX = [0, 0, 0, 0, 64 * 1024, 256 * 1024, 1024 * 1024, 4 * 1024 * 1024];
// Linked blocks may refer back this far into what came before.
const WINDOW = 64 * 1024;

/** Reads exact byte counts from an async stream of chunks (LZ4 frames here, image tars in the emulator's runtime). */
export class ByteReader {
  private buffered: Buffer[] = [];
  private size = 0;
  private readonly source: AsyncIterator<Buffer>;
  constructor(
    source: AsyncIterable<Buffer>,
    /** The error for a stream that ends within `n` bytes asked for, `got` of them there. */
    private readonly truncated: (got: number, n: number) => Error = (got, n) => new Lz4FormatError(`the LZ4 stream ends in the middle (${got} of ${n} bytes)`),
  ) {
    this.source = source[Symbol.asyncIterator]();
  }

  /** What is there next, at most `max` bytes and at least one (no copy of a chunk), or null at the end. */
  async upTo(max: number): Promise<Buffer | null> {
    while (this.size === 0) {
      const next = await this.source.next();
      if (next.done) return null;
      this.buffered = [next.value];
      this.size = next.value.length;
    }
    const first = this.buffered[0]!;
    if (first.length <= max) {
      this.buffered.shift();
      this.size -= first.length;
      return first;
    }
    this.buffered[0] = first.subarray(max);
    this.size -= max;
    return first.subarray(0, max);
  }

  /** `n` bytes, or null at a clean end (nothing left at all); throws when the stream ends within them. */
  async read(n: number): Promise<Buffer | null> {
    while (this.size < n) {
      const next = await this.source.next();
      if (next.done) {
        if (this.size === 0) return null;
        throw this.truncated(this.size, n);
      }
      this.buffered.push(next.value);
      this.size += next.value.length;
    }
    const all = this.buffered.length === 1 ? this.buffered[0]! : Buffer.concat(this.buffered, this.size);
    this.buffered = all.length > n ? [all.subarray(n)] : [];
    this.size -= n;
    return all.subarray(0, n);
  }

  async need(n: number): Promise<Buffer> {
    const bytes = await this.read(n);
    if (bytes === null) throw new Lz4FormatError('the LZ4 stream ends in the middle');
    return bytes;
  }
}

/**
 * Undoes LZ4 frames as they stream in (one after another, as `cat a.lz4 b.lz4` makes them), with independent or
 * linked blocks, so an 8 GB build is read with flat memory. lz4-napi undoes each block (with the window before it
 * as its dictionary when blocks are linked). Checksums are skipped, not checked: the upload was checked by SHA-256.
 */
export async function* decompressLz4(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
  const { uncompressSync } = lz4();
  const input = new ByteReader(source);
  for (let frames = 0; ; frames++) {
    const magic = await input.read(4);
    if (magic === null) {
      if (frames === 0) throw new Lz4FormatError('the LZ4 stream is empty');
      return;
    }
    const word = magic.readUInt32LE(0);
    // Skippable frames (0x184D2A50 to 0x184D2A5F) carry data for others: their length, then that many bytes.
    if ((word & 0xfffffff0) === 0x184d2a50) {
      await input.need((await input.need(4)).readUInt32LE(0));
      continue;
    }
    if (!magic.equals(LZ4_MAGIC)) throw new Lz4FormatError('not an LZ4 frame (its first bytes are not the LZ4 magic number)');
    const [flg, bd] = await input.need(2);
    if (flg! >> 6 !== 1) throw new Lz4FormatError(`an LZ4 frame of version ${flg! >> 6}, not 1`);
    const linked = (flg! & 0x20) === 0;
    const blockChecksum = (flg! & 0x10) !== 0;
    const contentChecksum = (flg! & 0x04) !== 0;
    if (flg! & 0x01) throw new Lz4FormatError('an LZ4 frame that needs a dictionary');
    const maxBlock = BLOCK_MAX[(bd! >> 4) & 7] ?? 0;
    if (maxBlock === 0) throw new Lz4FormatError('an LZ4 frame with an unknown block size');
    // The content size (when given) and the header checksum.
    await input.need((flg! & 0x08 ? 8 : 0) + 1);
    const sizePrefix = Buffer.alloc(4);
    sizePrefix.writeUInt32LE(maxBlock);
    let window: Buffer = Buffer.alloc(0);
    for (;;) {
      const size = (await input.need(4)).readUInt32LE(0);
      if (size === 0) break;
      const length = size & 0x7fffffff;
      if (length > maxBlock) throw new Lz4FormatError(`an LZ4 block of ${length} bytes, over the frame's ${maxBlock}`);
      const data = await input.need(length);
      let block: Buffer;
      if (size & UNCOMPRESSED) block = Buffer.from(data);
      else {
        try {
          block = linked && window.length > 0 ? uncompressSync(Buffer.concat([sizePrefix, data]), window) : uncompressSync(Buffer.concat([sizePrefix, data]));
        } catch (err) {
          throw new Lz4FormatError(`a damaged LZ4 block (${(err as Error).message})`);
        }
      }
      if (blockChecksum) await input.need(4);
      if (linked) window = block.length >= WINDOW ? block.subarray(block.length - WINDOW) : Buffer.concat([window, block]).subarray(-WINDOW);
      yield block;
    }
    if (contentChecksum) await input.need(4);
  }
}
