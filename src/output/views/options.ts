// What a view needs to know about where it is drawn. Views are pure functions of (data, ViewOptions), so the
// same data always renders to the same text and tests can pin the clock, the width and the zone.
import { Chalk, type ChalkInstance } from 'chalk';
import type { BaseContext } from '../../base-context.js';
import type { OutStream } from '../../shared/io.js';
import { colorEnabled } from '../color.js';
import { fitLine, type TimeStyle } from '../format.js';

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

export function viewOptions(ctx: BaseContext, stream: OutStream, utc: boolean): ViewOptions {
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
