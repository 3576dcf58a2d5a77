// Formatting of sizes, durations and times, for people (a terminal) and for scripts (a pipe).

import { createRequire } from 'node:module';

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];

/**
 * The largest of `values` and `floor`, non-finite values ignored. A loop, not `Math.max(...values)`: spreading an
 * array into a call overflows the stack at around 125,000 elements.
 */
export function maxOf(values: Iterable<number>, floor = -Infinity): number {
  let max = floor;
  for (const v of values) if (Number.isFinite(v) && v > max) max = v;
  return max;
}

/** The smallest of `values` and `ceiling`, non-finite values ignored (see maxOf). */
export function minOf(values: Iterable<number>, ceiling = Infinity): number {
  let min = ceiling;
  for (const v of values) if (Number.isFinite(v) && v < min) min = v;
  return min;
}

/** The mean of the finite values, without overflow for values near ±1.8e308; undefined when there are none. */
export function meanOf(values: readonly number[]): number | undefined {
  let n = 0;
  for (const v of values) if (Number.isFinite(v)) n++;
  if (n === 0) return undefined;
  let mean = 0;
  for (const v of values) if (Number.isFinite(v)) mean += v / n;
  // Rounding can carry a mean of values at the very top of the range just past it.
  return Math.min(Number.MAX_VALUE, Math.max(-Number.MAX_VALUE, mean));
}

// A leap second (23:59:60, valid RFC 3339) that Date.parse refuses: counted as the second after, as Unix time does.
const LEAP_SECOND = /^(\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}):60(\.\d+)?(.*)$/;

/** Milliseconds since the epoch of an RFC 3339 time (leap seconds included); NaN when it does not parse. */
export function parseTimestamp(text: string): number {
  const ms = Date.parse(text);
  if (!Number.isNaN(ms)) return ms;
  const leap = LEAP_SECOND.exec(text.trim());
  return leap ? Date.parse(`${leap[1]}:59${leap[2] ?? ''}${leap[3]}`) + 1000 : NaN;
}

export function formatBytes(bytes: number): string {
  if (!Number.isFinite(bytes)) return '-';
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < UNITS.length - 1) {
    value /= 1024;
    unit++;
  }
  if (unit === 0) return `${value} B`;
  return `${value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2)} ${UNITS[unit]}`;
}

/** 850 ms, 4.2 s, 3m 05s, 2h 04m, 3d 4h */
export function formatDuration(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  const negative = ms < 0;
  let v = Math.abs(ms);
  let out: string;
  if (v < 1000) out = `${Math.round(v)} ms`;
  else if (v < 60_000) out = `${(v / 1000).toFixed(v < 10_000 ? 1 : 0)} s`;
  else {
    v = Math.floor(v / 1000);
    const d = Math.floor(v / 86_400);
    const h = Math.floor((v % 86_400) / 3600);
    const m = Math.floor((v % 3600) / 60);
    const s = v % 60;
    if (d > 0) out = `${d}d ${h}h`;
    else if (h > 0) out = `${h}h ${String(m).padStart(2, '0')}m`;
    else out = `${m}m ${String(s).padStart(2, '0')}s`;
  }
  return negative ? `-${out}` : out;
}

/** The time from one moment to a later one: `+4.2 s`; a later moment that is earlier (out of order): `−1h 00m`. */
export function formatOffset(ms: number): string {
  if (!Number.isFinite(ms)) return '';
  return ms < 0 ? `\u2212${formatDuration(-ms)}` : `+${formatDuration(ms)}`;
}

export interface TimeStyle {
  /** Human form (a terminal) instead of RFC 3339 UTC (pipes, JSON). */
  local: boolean;
  /** With `local`: the human form in UTC instead of the user's zone (--utc). */
  utc?: boolean;
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** The calendar fields of a moment, in UTC or in the process's local zone. */
function fields(d: Date, utc: boolean) {
  return utc
    ? { y: d.getUTCFullYear(), mo: d.getUTCMonth() + 1, da: d.getUTCDate(), h: d.getUTCHours(), mi: d.getUTCMinutes(), s: d.getUTCSeconds() }
    : { y: d.getFullYear(), mo: d.getMonth() + 1, da: d.getDate(), h: d.getHours(), mi: d.getMinutes(), s: d.getSeconds() };
}

/** `UTC`, or the local offset at that moment as `±HH:MM`. */
export function zoneLabel(value: string | number | Date, utc: boolean): string {
  if (utc) return 'UTC';
  const offset = -new Date(value).getTimezoneOffset();
  const sign = offset >= 0 ? '+' : '-';
  return `${sign}${pad(Math.floor(Math.abs(offset) / 60))}:${pad(Math.abs(offset) % 60)}`;
}

/**
 * RFC 3339 in UTC for scripts; `YYYY-MM-DD HH:MM:SS ±HH:MM` in the local zone for people (`… UTC` with --utc).
 * `form` shortens the human form for tables and clocks: `datetime` is `YYYY-MM-DD HH:MM:SS`, `short` is
 * `MM-DD HH:MM`, `clock` is `HH:MM:SS`; they leave the zone to a caption.
 */
export function formatTime(
  value: string | number | Date,
  style: TimeStyle,
  form: 'full' | 'datetime' | 'short' | 'clock' = 'full',
): string {
  // A time that does not parse is shown as given, never as `NaN` or `Invalid Date`. The moment as Date holds it:
  // whole milliseconds (truncated), NaN when out of range.
  const t = value instanceof Date ? value.getTime() : timeClip(typeof value === 'string' ? parseTimestamp(value) : value);
  if (Number.isNaN(t)) return String(value);
  const utc = style.utc === true || !style.local;
  // The moment shifted by the zone's offset then, so the UTC calendar reads as the local wall clock.
  const wall = utc ? t : timeClip(t - new Date(t).getTimezoneOffset() * 60_000);
  const wallClock = isoWall(wall);
  if (!style.local) {
    // RFC 3339 as toISOString writes it, without a zero fraction.
    if (wallClock !== undefined) return `${wallClock.date}T${wallClock.time}${wallClock.ms === 0 ? '' : `.${String(wallClock.ms).padStart(3, '0')}`}Z`;
    return new Date(t).toISOString().replace('.000Z', 'Z');
  }
  let datetime: string;
  if (wallClock !== undefined) {
    datetime = `${wallClock.date} ${wallClock.time}`;
  } else {
    // Years past 9999 (or before 0) make the ISO form longer: the fields, one by one.
    const f = fields(new Date(t), utc);
    datetime = `${f.y}-${pad(f.mo)}-${pad(f.da)} ${pad(f.h)}:${pad(f.mi)}:${pad(f.s)}`;
  }
  if (form === 'clock') return datetime.slice(-8);
  if (form === 'short') return datetime.slice(-14, -3);
  return form === 'datetime' ? datetime : `${datetime} ${zoneLabel(t, utc)}`;
}

/** What `new Date(ms)` keeps of a number: whole milliseconds toward zero, NaN beyond ±8.64e15 ms. */
function timeClip(ms: number): number {
  return Number.isFinite(ms) && Math.abs(ms) <= 8.64e15 ? Math.trunc(ms) + 0 : NaN;
}

const DAY_MS = 86_400_000;
/** 0000-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z: the moments whose ISO form has a four-digit year. */
const ISO_FIRST = -62_167_219_200_000;
const ISO_LAST = 253_402_300_799_999;
const TWO_DIGITS = Array.from({ length: 60 }, (_, i) => String(i).padStart(2, '0'));
let lastDay = NaN;
let lastDate = '';

/**
 * A moment's UTC calendar as toISOString gives it (`YYYY-MM-DD`, `HH:MM:SS`, milliseconds), by arithmetic: a table
 * of 200,000 rows formats 400,000 times, mostly on a few days, so the date is built once per day. Undefined outside
 * four-digit years.
 */
function isoWall(ms: number): { date: string; time: string; ms: number } | undefined {
  if (!(ms >= ISO_FIRST && ms <= ISO_LAST)) return undefined;
  const day = Math.floor(ms / DAY_MS);
  if (day !== lastDay) {
    lastDate = new Date(day * DAY_MS).toISOString().slice(0, 10);
    lastDay = day;
  }
  const rest = ms - day * DAY_MS;
  const s = Math.floor(rest / 1000);
  const time = `${TWO_DIGITS[Math.floor(s / 3600)]}:${TWO_DIGITS[Math.floor(s / 60) % 60]}:${TWO_DIGITS[s % 60]}`;
  return { date: lastDate, time, ms: rest % 1000 };
}

/** A change between two readings for people: `+3`, `−1` (a true minus sign), and `` for none. */
export function formatChange(delta: number): string {
  if (delta === 0 || !Number.isFinite(delta)) return '';
  return delta > 0 ? `+${delta}` : `\u2212${Math.abs(delta)}`;
}

/** Bytes as MiB with a precision that suits the size: `205 MiB`, `48.5 MiB`, `3.25 MiB`. */
export function formatMiB(bytes: number): string {
  if (!Number.isFinite(bytes)) return '-';
  const v = bytes / (1024 * 1024);
  return `${v >= 100 ? v.toFixed(0) : v >= 10 ? v.toFixed(1) : v.toFixed(2)} MiB`;
}

/**
 * A count for people, in thousands: `4,007` (the one form of a count beside another in a view). Rounded half away
 * from zero and grouped as `toLocaleString('en-US')` does, without it: its first call loads ICU's number formats,
 * about 35 ms of a command's start.
 */
export function formatCount(n: number): string {
  if (!Number.isFinite(n)) return '-';
  const digits = BigInt(Math.round(Math.abs(n))).toString();
  const sign = n < 0 && digits !== '0' ? '-' : '';
  return sign + digits.replace(/\B(?=(\d{3})+$)/g, ',');
}

/** Lobby-hours: `1,234 h`, `12.5 h`, `0.42 h`, `<0.01 h` (something, but less than shows). */
export function formatHours(ms: number): string {
  if (!Number.isFinite(ms)) return '-';
  const h = ms / 3_600_000;
  if (h > 0 && h < 0.005) return '<0.01 h';
  if (h >= 1000) return `${formatCount(Math.round(h))} h`;
  return `${h >= 100 ? h.toFixed(0) : h >= 10 ? h.toFixed(1) : h.toFixed(2)} h`;
}

/** A percentage for people: `67%`, and `<1%` for a small share that is not nothing. */
export function formatShare(part: number, whole: number): string {
  if (!(whole > 0) || !Number.isFinite(whole) || !Number.isFinite(part)) return '-';
  const p = 100 * (part / whole);
  if (!Number.isFinite(p)) return '-';
  if (p > 0 && p < 0.5) return '<1%';
  return `${Math.round(p)}%`;
}

// One measure of width on screen, the one cli-table3 lays a screenful out with (string-width 4, the copy it
// depends on), so the rows streamed past a screenful line up with those it laid out. It counts a whole emoji
// sequence (a ZWJ family, a flag, a skin tone, a variation selector) as the two columns a terminal shows, wide
// East Asian characters as two, combining marks and controls as none.
//
// string-width runs its emoji expression over every string, which made a table of 200,000 rows with a Japanese name
// on each three times slower to lay out. Text that cannot hold an emoji nor a colour code is measured here as
// string-width measures the rest (test/unit/table.test.ts compares the two on generated text). Both are loaded
// when the first text beyond printable ASCII is measured: output that is all ASCII (every --json) never loads them.
type Measure = (text: string) => number;
let widthOf: { full: Measure; wide: (codePoint: number) => boolean } | undefined;
function load(): NonNullable<typeof widthOf> {
  if (widthOf) return widthOf;
  const require = createRequire(import.meta.url);
  return (widthOf = { full: require('string-width') as Measure, wide: require('is-fullwidth-code-point') as (cp: number) => boolean });
}
/** Anything string-width's emoji expression could match, or its ANSI stripping remove. */
const MAY_HOLD_EMOJI = /[\p{Extended_Pictographic}\u{1F000}-\u{10FFFF}\u20E3\uFE0F\x1b\x9b]/u;

/** Printable ASCII only: one column a character, nothing to strip or measure (most text a table shows). */
export const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/** The width of a string on screen, colour codes not counted. */
export function visibleWidth(text: string): number {
  if (PRINTABLE_ASCII.test(text)) return text.length;
  const { full, wide } = load();
  if (MAY_HOLD_EMOJI.test(text)) return full(text);
  let width = 0;
  for (let i = 0; i < text.length; i++) {
    const cp = text.codePointAt(i)!;
    if (cp > 0xffff) i++;
    if (cp <= 0x1f || (cp >= 0x7f && cp <= 0x9f) || (cp >= 0x300 && cp <= 0x36f)) continue;
    width += wide(cp) ? 2 : 1;
  }
  return width;
}

// Colour codes, kept apart by split: the text between them at even indices, the codes at odd ones.
// eslint-disable-next-line no-control-regex
const SGR_PARTS = /(\x1b\[[0-9;]*m)/;
let graphemes: Intl.Segmenter | undefined;

/**
 * Cuts a line (colour codes kept) to `width` screen columns, ending with `…` when cut, so a terminal never wraps
 * it; a cut line that carried colour ends with a reset. It cuts between what a reader sees as characters (grapheme
 * clusters), never inside an emoji sequence or between a letter and its accent.
 */
export function fitLine(line: string, width: number): string {
  if (visibleWidth(line) <= width) return line;
  if (width <= 0) return '';
  graphemes ??= new Intl.Segmenter();
  let out = '';
  let used = 0;
  let coloured = false;
  const parts = line.split(SGR_PARTS);
  cut: for (let i = 0; i < parts.length; i++) {
    if (i % 2 === 1) {
      out += parts[i];
      coloured = true;
      continue;
    }
    for (const { segment } of graphemes.segment(parts[i]!)) {
      const w = visibleWidth(segment);
      if (used + w > width - 1) break cut;
      out += segment;
      used += w;
    }
  }
  return out + '…' + (coloured ? '\x1b[0m' : '');
}

export function formatRate(bytesPerSecond: number): string {
  return `${formatBytes(Math.round(bytesPerSecond))}/s`;
}
