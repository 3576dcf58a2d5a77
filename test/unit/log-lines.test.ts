// The view of a lobby's log lines: the answer's shape checked, lines decoded, the two streams merged in time, and
// each line written for a person, a script or JSON.
import { describe, expect, it } from 'vitest';
import { ResponseError } from '../../src/errors.js';
import { checkLogLines, formatLogEntries, logEntries, logEntryJson, mergeEntries, timestampNs } from '../../src/output/views/log-lines.js';

const b64 = (text: string | Buffer) => Buffer.from(text).toString('base64');
const view = { columns: 80, now: 0, utc: true, color: false, timestamps: false, both: false };

describe('log lines', () => {
  it('reads RFC 3339 times to the nanosecond, in any zone, a leap second included; anything else is unknown', () => {
    const second = BigInt(Date.parse('2026-11-25T20:35:46Z')) * 1_000_000n;
    expect(timestampNs('2026-11-25T20:35:46.123456789Z')).toBe(second + 123_456_789n);
    expect(timestampNs('2026-11-25T21:35:46.1+01:00')).toBe(second + 100_000_000n);
    expect(timestampNs('2026-11-25T21:35:46+0100')).toBe(second);
    expect(timestampNs('2016-12-31T23:59:60Z')).toBe(BigInt(Date.parse('2017-01-01T00:00:00Z')) * 1_000_000n);
    for (const odd of ['', 'yesterday', '2026-11-25', '2026-13-45T99:99:99Z', '1795984546']) expect(timestampNs(odd), odd).toBeUndefined();
  });

  it('decodes base64 lines, bytes that are not UTF-8 as U+FFFD; a line that is not base64 is kept as sent', () => {
    const res = checkLogLines({ lines: [b64('héllo'), b64(Buffer.from([0x61, 0xff])), 'no base64!', 'YQ', ''], timestamps: ['2026-11-25T20:35:46Z'], watch: { index: '7' } });
    const entries = logEntries('std_out', res);
    expect(entries.map((e) => [e.text, e.notBase64 === true, e.ts])).toEqual([
      ['héllo', false, '2026-11-25T20:35:46Z'],
      ['a\uFFFD', false, undefined],
      ['no base64!', true, undefined],
      ['a', false, undefined],
      ['', false, undefined],
    ]);
  });

  it('merges two streams by time; a line whose time is unknown keeps its place in its stream', () => {
    const at = (stream: 'std_out' | 'std_err', text: string, ts?: string) => logEntries(stream, { lines: [b64(text)], timestamps: ts ? [ts] : [], watch: { index: '' } })[0]!;
    const out = [at('std_out', 'o1', '2026-11-25T20:00:00.000000001Z'), at('std_out', 'o2'), at('std_out', 'o3', '2026-11-25T20:00:03Z')];
    const err = [at('std_err', 'e1', '2026-11-25T20:00:00.000000002Z'), at('std_err', 'e2', '2026-11-25T20:00:02Z')];
    expect(mergeEntries(out, err).map((e) => e.text)).toEqual(['o1', 'o2', 'e1', 'e2', 'o3']);
    expect(mergeEntries([], err)).toBe(err);
  });

  it('writes a line per entry: sanitised and on one line; its time on a terminal, or with --timestamps piped; stderr marked when both show', () => {
    const entries = logEntries('std_err', { lines: [b64('\x1b[2J\x1b]0;t\x07a\tb\nc\r')], timestamps: ['2026-11-25T20:35:46.5Z'], watch: { index: '1' } });
    expect(formatLogEntries(entries, { ...view, tty: false })).toBe('a\tb c\n');
    expect(formatLogEntries(entries, { ...view, tty: false, timestamps: true })).toBe('2026-11-25T20:35:46.5Z\ta\tb c\n');
    expect(formatLogEntries(entries, { ...view, tty: true, timestamps: true })).toBe('20:35:46.500 a\tb c\n');
    expect(formatLogEntries(entries, { ...view, tty: true, timestamps: true, both: true })).toBe('20:35:46.500 err a\tb c\n');
    expect(logEntryJson(entries[0]!)).toEqual({ stream: 'std_err', ts: '2026-11-25T20:35:46.5Z', line: '\x1b[2J\x1b]0;t\x07a\tb\nc\r' });
  });

  it.each([
    [null, 'the answer is not an object'],
    [[], 'the answer is not an object'],
    [{ lines: {}, timestamps: [], watch: { index: '1' } }, '`lines` is not a list'],
    [{ lines: [], timestamps: null, watch: { index: '1' } }, '`timestamps` is not a list'],
    [{ lines: [null], timestamps: [], watch: { index: '1' } }, '`lines` holds something other than text'],
    [{ lines: [], timestamps: [5], watch: { index: '1' } }, '`timestamps` holds something other than text'],
    [{ lines: [], timestamps: [] }, '`watch.index` is not text'],
    [{ lines: [], timestamps: [], watch: { index: 12 } }, '`watch.index` is not text'],
  ])('refuses %j: %s', (answer, why) => {
    expect(() => checkLogLines(answer)).toThrow(new ResponseError(`the service's log lines are unusable: ${why}`));
  });
});
