// The lines of a stream waiting for the store (runtime/lobby.ts): kept in one ring of bytes, the oldest dropped past
// the bounds. Checked against a plain array doing the same by the rules, through random pushes and takes that wrap
// the ring round its end, grow it and hit both bounds.
import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { PendingLines } from '../../src/emulator/runtime/lobby.js';

const FLUSH_LINES = 256;
const FLUSH_BYTES = 256 * 1024;

class Model {
  lines: { line: Buffer; at: number }[] = [];
  bytes = 0;
  constructor(private readonly bounds: { lines: number; bytes: number }) {}
  push(line: Buffer, at: number): void {
    while (this.lines.length > 0 && (this.lines.length >= this.bounds.lines || this.bytes + line.length > this.bounds.bytes)) this.bytes -= this.lines.shift()!.line.length;
    this.lines.push({ line: Buffer.from(line), at });
    this.bytes += line.length;
  }
  take(): { lines: Buffer[]; at: number } | undefined {
    if (this.lines.length === 0) return undefined;
    const out: Buffer[] = [];
    let bytes = 0;
    const at = this.lines[0]!.at;
    while (this.lines.length > 0 && out.length < FLUSH_LINES && (out.length === 0 || bytes + this.lines[0]!.line.length <= FLUSH_BYTES)) {
      const { line } = this.lines.shift()!;
      bytes += line.length;
      this.bytes -= line.length;
      out.push(line);
    }
    return { lines: out, at };
  }
}

/** A batch as comparable values: when its first line came, each line's length, and all its bytes. */
const batch = (b: { lines: Buffer[]; at: number } | undefined) => b && { at: b.at, sizes: b.lines.map((l) => l.length), hex: Buffer.concat(b.lines).toString('hex') };

function seeded(seed: number): () => number {
  return () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
}

describe('PendingLines', () => {
  for (const [name, bounds, maxLine] of [
    ['small bounds: the ring wraps and drops on bytes', { lines: 1_000, bytes: 100_000 }, 16_384],
    ['the line bound', { lines: 50, bytes: 1_000_000 }, 300],
    ['the store’s bounds', { lines: 10_000, bytes: 5 * 1024 * 1024 }, 16_384],
  ] as const) {
    it(`keeps what a plain queue keeps, in order (${name})`, () => {
      const random = seeded(name.length);
      const pending = new PendingLines(bounds);
      const model = new Model(bounds);
      let at = 0;
      let taken = 0;
      for (let op = 0; op < 4_000; op++) {
        if (random() < 0.85) {
          // Empty lines too: a blank line is a line.
          const line = randomBytes(Math.floor(random() ** 3 * maxLine));
          pending.push(line, ++at);
          model.push(line, at);
          line.fill(0); // the caller's buffer is reused at once (a view of a pipe's read): what was kept is a copy
        } else {
          const got = pending.take();
          expect(batch(got)).toEqual(batch(model.take()));
          taken += got?.lines.length ?? 0;
        }
        expect(pending.count).toBe(model.lines.length);
        expect(pending.bytes).toBe(model.bytes);
        expect(pending.bytes).toBeLessThanOrEqual(bounds.bytes);
        expect(pending.count).toBeLessThanOrEqual(bounds.lines);
      }
      for (let got = pending.take(); got !== undefined; got = pending.take()) expect(batch(got)).toEqual(batch(model.take()));
      expect(model.lines).toEqual([]);
      expect(taken).toBeGreaterThan(0);
    });
  }

  it('fills to the byte bound exactly, and drops the oldest line for the next byte', () => {
    const pending = new PendingLines({ lines: 100, bytes: 100 });
    for (let i = 0; i < 10; i++) pending.push(Buffer.alloc(10, 0x30 + i), i);
    expect([pending.count, pending.bytes]).toEqual([10, 100]);
    pending.push(Buffer.from('x'), 10);
    expect([pending.count, pending.bytes]).toEqual([10, 91]);
    const got = pending.take()!;
    expect(got.at).toBe(1);
    expect(Buffer.concat(got.lines).toString()).toBe('111111111122222222223333333333444444444455555555556666666666777777777788888888889999999999x');
  });
});
