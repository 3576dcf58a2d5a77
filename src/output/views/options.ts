// What a view needs to know about where it is drawn. Views are pure functions of (data, ViewOptions), so the
// same data always renders to the same text and tests can pin the clock, the width and the zone.
import { Chalk, type ChalkInstance } from 'chalk';
import type { Context, OutStream } from '../../context.js';
import { colorEnabled } from '../color.js';
import { fitLine, visibleWidth, type TimeStyle } from '../format.js';
import { sanitizeLine } from '../sanitize.js';

export interface ViewOptions {
  /** The human form (aligned, coloured, local times) rather than the script form (TSV, RFC 3339 UTC). */
  tty: boolean;
  /** Terminal width; lines never exceed `columns - 1`, so nothing wraps. */
  columns: number;
  /** The moment the view describes (ages, "updated at"), ms since the epoch. */
  now: number;
  /** Human times in UTC instead of the local zone (--utc). */
  utc: boolean;
  color: boolean;
}

export function viewOptions(ctx: Context, stream: OutStream, utc: boolean): ViewOptions {
  return {
    tty: stream.isTTY === true,
    // A terminal that reports no size (0) is treated as the usual 80 columns.
    columns: stream.columns || 80,
    now: ctx.now(),
    utc,
    color: colorEnabled(ctx, stream),
  };
}

export function paint(o: ViewOptions): ChalkInstance {
  return new Chalk({ level: o.color ? 1 : 0 });
}

export function timeStyle(o: ViewOptions): TimeStyle {
  return { local: o.tty, utc: o.utc };
}

/** `Label  value` lines with the labels aligned, each cut to the width; server strings must be sanitised first. */
export function labelled(o: ViewOptions, rows: [label: string, value: string][], indent = ''): string {
  const c = paint(o);
  const width = Math.max(0, ...rows.map(([l]) => visibleWidth(l)));
  return rows.map(([l, v]) => fit(`${indent}${c.dim(l.padEnd(width))}  ${v}`, o) + '\n').join('');
}

/** `key<TAB>value` lines for scripts. */
export function keyValues(rows: [key: string, value: string | number | null | undefined][]): string {
  return rows.map(([k, v]) => `${k}\t${v == null ? '' : sanitizeLine(String(v))}\n`).join('');
}

/** A line cut to the terminal's width; a pipe has no width to wrap at, so it gets the whole line. */
export function fit(line: string, o: ViewOptions): string {
  return o.tty ? fitLine(line, o.columns - 1) : line;
}

/** Every line of a block cut to the width. */
export function fitBlock(text: string, o: ViewOptions): string {
  return text
    .split('\n')
    .map((l) => fit(l, o))
    .join('\n');
}
