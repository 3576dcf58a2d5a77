import { describe, expect, it } from 'vitest';
import { formatBytes, formatCount, formatDuration, formatTime } from '../../src/output/format.js';
import { fitWidths } from '../../src/output/table.js';
import { parseErrorBody } from '../../src/api/transport.js';

describe('format', () => {
  it('counts group and round as en-US toLocaleString does (without loading ICU)', () => {
    const values = [0, 7, 999, 1000, 4007, 12345.5, 2.5, -2.5, -1234567.49, 2 ** 53 + 2, 1e21, 123456789012];
    for (let i = 0; i < 500; i++) values.push(Math.round((Math.random() - 0.5) * 10 ** (1 + (i % 16))) / (i % 3 === 0 ? 10 : 1));
    // Apart from one: what rounds to nothing is 0, never toLocaleString's -0.
    for (const n of values.filter((v) => Math.abs(v) >= 0.5)) expect(formatCount(n), String(n)).toBe(n.toLocaleString('en-US', { maximumFractionDigits: 0 }));
    expect([-0.2, -0, 0.4].map(formatCount)).toEqual(['0', '0', '0']);
    expect([NaN, Infinity].map(formatCount)).toEqual(['-', '-']);
  });
  it('bytes', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(1536)).toBe('1.50 KiB');
    expect(formatBytes(1024 ** 3 * 1.2)).toBe('1.20 GiB');
    expect(formatBytes(150 * 1024 ** 2)).toBe('150 MiB');
  });
  it('durations', () => {
    expect(formatDuration(850)).toBe('850 ms');
    expect(formatDuration(4200)).toBe('4.2 s');
    expect(formatDuration(185_000)).toBe('3m 05s');
    expect(formatDuration(2 * 3_600_000 + 4 * 60_000)).toBe('2h 04m');
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000)).toBe('3d 4h');
  });
  it('times: RFC 3339 UTC for scripts', () => {
    expect(formatTime('2026-11-21T10:42:03.000Z', { local: false })).toBe('2026-11-21T10:42:03Z');
    expect(formatTime(Date.UTC(2026, 0, 2, 3, 4, 5, 600), { local: false })).toBe('2026-01-02T03:04:05.600Z');
  });
  it('times by arithmetic read as the native ISO form, from year 0 to 9999 and beyond, whole days and fractions', () => {
    // Seeded moments over the whole range of Date, plus the edges where the ISO form gains a sign or a digit.
    let seed = 42;
    const random = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const moments = [0, -1, 0.5, -0.5, 86_399_999, -86_400_000, -62_167_219_200_000, -62_167_219_200_001, 253_402_300_799_999, 253_402_300_800_000, 8.64e15, -8.64e15];
    for (let i = 0; i < 500; i++) moments.push((random() - 0.5) * 1.7e16, Math.floor((random() - 0.5) * 2e13), 1.7e12 + random() * 1e11);
    for (const ms of moments) {
      const iso = new Date(ms).toISOString();
      expect(formatTime(ms, { local: false })).toBe(iso.replace('.000Z', 'Z'));
      if (iso.length !== 24) continue;
      const datetime = `${iso.slice(0, 10)} ${iso.slice(11, 19)}`;
      expect(formatTime(ms, { local: true, utc: true }, 'datetime')).toBe(datetime);
      expect(formatTime(ms, { local: true, utc: true })).toBe(`${datetime} UTC`);
      expect(formatTime(ms, { local: true, utc: true }, 'short')).toBe(datetime.slice(5, 16));
      expect(formatTime(ms, { local: true, utc: true }, 'clock')).toBe(datetime.slice(11));
    }
    // Beyond Date's range: shown as given, never `Invalid Date`.
    expect(formatTime(8.64e15 + 1, { local: false })).toBe('8640000000000001');
  });
  it('a local time at the very edge of Date\'s range is shown by its fields, not a RangeError', () => {
    expect(formatTime(8.64e15, { local: true }, 'datetime')).toMatch(/^\+?275760-09-1[23] \d\d:\d\d:\d\d$/);
    expect(formatTime(-8.64e15, { local: true }, 'datetime')).toMatch(/^-271821-04-(19|20) \d\d:\d\d:\d\d$/);
  });
});

describe('fitWidths', () => {
  it('leaves narrow tables alone and shrinks the widest column to fit', () => {
    expect(fitWidths([5, 10], 80)).toEqual([5, 10]);
    const w = fitWidths([10, 60, 30], 80);
    expect(w.reduce((a, b) => a + b, 0) + 4).toBeLessThanOrEqual(80);
    expect(w[0]).toBe(10);
  });
});


describe('parseErrorBody', () => {
  it('keeps the service error shape', () => {
    expect(parseErrorBody(400, '{"code":"X","message":"bad","ray_id":"r"}')).toMatchObject({ code: 'X', message: 'bad' });
  });
  it('describes an HTML 502 page in one line', () => {
    const body = parseErrorBody(502, '<html><head><title>502 Bad Gateway</title></head><body>nginx</body></html>');
    expect(body).toEqual({ code: 'HTTP_502', message: 'the service answered 502 Bad Gateway (an HTML page: "502 Bad Gateway")' });
  });
  it('describes truncated JSON', () => {
    expect(parseErrorBody(500, '{"code":"ERR').message).toBe('the service answered 500 Internal Server Error (malformed JSON)');
  });
});
