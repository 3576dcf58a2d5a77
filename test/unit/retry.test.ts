import { describe, expect, it } from 'vitest';
import { backoffMs, parseRetryAfter } from '../../src/shared/retry.js';

describe('parseRetryAfter', () => {
  const now = Date.UTC(2026, 10, 21, 12, 0, 0);
  it('reads delta-seconds', () => expect(parseRetryAfter('7', now)).toBe(7000));
  it('reads an HTTP-date', () => expect(parseRetryAfter('Sat, 21 Nov 2026 12:00:05 GMT', now)).toBe(5000));
  it('a date in the past means now', () => expect(parseRetryAfter('Sat, 21 Nov 2026 11:00:00 GMT', now)).toBe(0));
  it('ignores junk', () => {
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
  });
});

describe('backoffMs', () => {
  const policy = { attempts: 6, baseMs: 100, maxMs: 1000 };
  it('grows exponentially under the cap, with full jitter', () => {
    expect(backoffMs({ ...policy, random: () => 0.999 }, 1)).toBe(99);
    expect(backoffMs({ ...policy, random: () => 0.999 }, 3)).toBe(399);
    expect(backoffMs({ ...policy, random: () => 0.999 }, 10)).toBe(999);
    expect(backoffMs({ ...policy, random: () => 0 }, 4)).toBe(0);
  });
  it('never waits less than Retry-After', () => {
    expect(backoffMs({ ...policy, random: () => 0 }, 1, 3000)).toBe(3000);
  });
});
