import { describe, expect, it } from 'vitest';
import { parseDuration, parseTime } from '../../src/timeparse.js';

describe('parseDuration', () => {
  it.each([
    ['90m', 90 * 60_000],
    ['24h', 24 * 3_600_000],
    ['7d', 7 * 86_400_000],
    ['1h30m', 90 * 60_000],
    ['45s', 45_000],
    ['1w', 7 * 86_400_000],
  ])('%s', (raw, ms) => expect(parseDuration('--since', raw)).toBe(ms));

  it.each(['', '7', 'd', '7x', '-5m', '5m garbage', '0m'])('refuses %j with the flag named', (raw) => {
    expect(() => parseDuration('--since', raw)).toThrow(/--since/);
  });
});

describe('parseTime', () => {
  it('reads epoch milliseconds', () => expect(parseTime('--from', '1700000000000')).toBe(1_700_000_000_000));
  it('reads RFC 3339 with a zone', () => {
    expect(parseTime('--from', '2026-11-20T10:00:00Z')).toBe(Date.UTC(2026, 10, 20, 10));
    expect(parseTime('--from', '2026-11-20T12:00:00+02:00')).toBe(Date.UTC(2026, 10, 20, 10));
  });
  it('reads a zoneless time or a date as UTC', () => {
    expect(parseTime('--to', '2026-11-20T10:00')).toBe(Date.UTC(2026, 10, 20, 10));
    expect(parseTime('--to', '2026-11-20')).toBe(Date.UTC(2026, 10, 20));
  });
  it.each(['yesterday', '2026-13-45', '1.5', '2026-11-20T25:00:00Z'])('refuses %j', (raw) => {
    expect(() => parseTime('--from', raw)).toThrow(/--from must be an RFC 3339 time/);
  });
});
