import { describe, expect, it } from 'vitest';
import { LineSplitter } from '../../src/emulator/runtime/runtime.js';

function split(chunks: (string | Buffer)[], max = 8): string[] {
  const lines: string[] = [];
  const s = new LineSplitter((l) => lines.push(l.toString('latin1')), max);
  for (const c of chunks) s.push(typeof c === 'string' ? Buffer.from(c, 'latin1') : c);
  s.end();
  return lines;
}

describe('LineSplitter', () => {
  it('splits on LF, drops the CR of CRLF, keeps empty lines, and ends with an unterminated last line', () => {
    expect(split(['a\nb\r\n\nc'])).toEqual(['a', 'b', '', 'c']);
    expect(split(['a\n'])).toEqual(['a']);
    expect(split([''])).toEqual([]);
  });

  it('joins a line sent in many chunks, a CRLF split between them included', () => {
    expect(split(['he', 'llo\r', '\nwor', 'ld\n'])).toEqual(['hello', 'world']);
  });

  it('passes a line longer than the bound on in pieces of the bound, losing nothing', () => {
    expect(split(['0123456789abcdefXY\n'])).toEqual(['01234567', '89abcdef', 'XY']);
    expect(split(['0123', '4567', '89\n'])).toEqual(['01234567', '89']);
    // Exactly the bound, then its newline: one line, no empty piece after it.
    expect(split(['01234567\n', 'next\n'])).toEqual(['01234567', 'next']);
    expect(split(['01234567', '\n'])).toEqual(['01234567']);
  });

  it('keeps bytes as they are (no decoding)', () => {
    const lines: Buffer[] = [];
    const s = new LineSplitter((l) => lines.push(l));
    s.push(Buffer.from([0xff, 0x00, 0x0a, 0xe2, 0x82]));
    s.push(Buffer.from([0xac, 0x0a]));
    expect(lines).toEqual([Buffer.from([0xff, 0x00]), Buffer.from('€')]);
  });
});
