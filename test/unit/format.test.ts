import { describe, expect, it } from 'vitest';
import { formatBytes, formatDuration, formatTime } from '../../src/output/format.js';
import { fitWidths } from '../../src/output/table.js';
import { parseErrorBody } from '../../src/api/client.js';

describe('format', () => {
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
