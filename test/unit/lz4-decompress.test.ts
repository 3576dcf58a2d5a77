// Undoing LZ4 frames as they stream: the frames this CLI writes, lz4-napi's own, linked blocks, several frames in a
// row, and what is not a frame (one clear error each).
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { compressFileLz4, decompressLz4, LZ4_MAGIC, Lz4FormatError } from '../../src/shared/lz4.js';
import { tempDir } from '../helpers/cli.js';

const lz4 = createRequire(import.meta.url)('lz4-napi') as {
  compressSync(data: Buffer, dict?: Buffer): Buffer;
  compressFrameSync(data: Buffer): Buffer;
};

const sample = Buffer.concat([Buffer.from('abcdefgh'.repeat(40_000)), crypto.randomBytes(200_000), Buffer.from('xyz'.repeat(60_000))]);

/** Feeds `bytes` in small chunks, so every field is split across chunks somewhere. */
async function undo(bytes: Buffer, chunk = 997): Promise<Buffer> {
  async function* chunks() {
    for (let i = 0; i < bytes.length; i += chunk) yield bytes.subarray(i, i + chunk);
  }
  const out: Buffer[] = [];
  for await (const b of decompressLz4(chunks())) out.push(b);
  return Buffer.concat(out);
}

/** A frame of linked 64 KiB blocks (each compressed against the 64 KiB before it), with a content checksum flag. */
function linkedFrame(data: Buffer): Buffer {
  const parts: Buffer[] = [LZ4_MAGIC, Buffer.from([0x44, 0x40, 0x00])]; // version 1, linked, content checksum; 64 KiB blocks; HC (unchecked)
  for (let at = 0; at < data.length; at += 65_536) {
    const block = data.subarray(at, at + 65_536);
    const dict = data.subarray(Math.max(0, at - 65_536), at);
    const packed = (dict.length ? lz4.compressSync(block, dict) : lz4.compressSync(block)).subarray(4);
    const size = Buffer.alloc(4);
    // What does not get smaller is stored as it is (the size's high bit says so).
    const stored = packed.length < block.length;
    size.writeUInt32LE(stored ? packed.length : (block.length | 0x8000_0000) >>> 0);
    parts.push(size, stored ? packed : block);
  }
  return Buffer.concat([...parts, Buffer.alloc(4), Buffer.alloc(4)]);
}

describe('decompressLz4', () => {
  it('undoes the frames compressFileLz4 writes, and lz4-napi\'s own', async () => {
    const dir = tempDir();
    fs.writeFileSync(path.join(dir, 'in'), sample);
    await compressFileLz4(path.join(dir, 'in'), path.join(dir, 'in.lz4'));
    expect((await undo(fs.readFileSync(path.join(dir, 'in.lz4')))).equals(sample)).toBe(true);
    expect((await undo(lz4.compressFrameSync(sample))).equals(sample)).toBe(true);
  });

  it('undoes what compressFileLz4 makes of a file of several of its reads, its last block partial; an abort stops it', async () => {
    const dir = tempDir();
    // 3 MiB and 12,345 bytes: three whole reads of 16 blocks, then a short one; runs of zeros and random bytes.
    const big = Buffer.concat([sample, Buffer.alloc(1_500_000), crypto.randomBytes(3 * 1024 * 1024 + 12_345 - sample.length - 1_500_000)]);
    fs.writeFileSync(path.join(dir, 'big'), big);
    await compressFileLz4(path.join(dir, 'big'), path.join(dir, 'big.lz4'));
    const frame = fs.readFileSync(path.join(dir, 'big.lz4'));
    expect(frame.length).toBeLessThan(big.length);
    expect((await undo(frame, 65_537)).equals(big)).toBe(true);
    const stop = new AbortController();
    stop.abort(new Error('interrupted'));
    await expect(compressFileLz4(path.join(dir, 'big'), path.join(dir, 'stopped.lz4'), stop.signal)).rejects.toThrow('interrupted');
  });

  it('undoes linked blocks, which refer back into the block before', async () => {
    const frame = linkedFrame(sample);
    expect(frame.length).toBeLessThan(sample.length / 2);
    expect((await undo(frame)).equals(sample)).toBe(true);
  });

  it('undoes frames one after another, skippable frames between them', async () => {
    const skippable = Buffer.concat([Buffer.from([0x50, 0x2a, 0x4d, 0x18]), Buffer.from([3, 0, 0, 0]), Buffer.from('abc')]);
    const joined = Buffer.concat([lz4.compressFrameSync(Buffer.from('one ')), skippable, lz4.compressFrameSync(Buffer.from('two'))]);
    expect((await undo(joined, 3)).toString()).toBe('one two');
  });

  it('refuses what is not a whole LZ4 frame, saying why', async () => {
    const frame = lz4.compressFrameSync(sample);
    await expect(undo(Buffer.from('POSIX tar'))).rejects.toThrow(/not an LZ4 frame/);
    await expect(undo(Buffer.alloc(0))).rejects.toThrow(/empty/);
    await expect(undo(frame.subarray(0, frame.length - 100))).rejects.toThrow(/ends in the middle/);
    const damaged = Buffer.from(frame);
    damaged.fill(0xff, 20, 60);
    await expect(undo(damaged)).rejects.toBeInstanceOf(Lz4FormatError);
  });
});
