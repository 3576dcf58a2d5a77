import { describe, expect, it } from 'vitest';
import { sanitize, sanitizeLine } from '../../src/output/sanitize.js';

describe('sanitize', () => {
  it('removes CSI, OSC and C1 sequences a hostile server could send', () => {
    expect(sanitize('a\x1b[2Jb\x1b[31mc\x1b[0m')).toBe('abc');
    expect(sanitize('x\x1b]0;owned\x07y')).toBe('xy');
    expect(sanitize('x\x1b]8;;http://evil\x1b\\link\x1b]8;;\x1b\\y')).toBe('xlinky');
    expect(sanitize('p\x9b2Jq')).toBe('p2Jq');
    expect(sanitize('bell\x07 back\x08space')).toBe('bell backspace');
  });
  it('keeps text, newlines and tabs; sanitizeLine folds them', () => {
    expect(sanitize('héllo\n\tworld')).toBe('héllo\n\tworld');
    expect(sanitizeLine('a\nb\tc\r\nd')).toBe('a b c d');
  });
});
