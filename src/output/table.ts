// One table renderer: in a terminal, aligned borderless columns that fit the width (cells cut with "…", never
// wrapped); piped, tab-separated rows without a header and without colour, for scripts.
import { Chalk } from 'chalk';
import Table from 'cli-table3';
import type { Context, OutStream } from '../context.js';
import { colorEnabled } from './color.js';
import { fitLine, visibleWidth } from './format.js';
import { sanitizeLine } from './sanitize.js';

export interface TableSpec {
  head: string[];
  rows: (string | number)[][];
  /** Columns to align right (numbers). */
  right?: number[];
}

const GAP = 2;
const MIN_COL = 6;
const NO_BORDER = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
  bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '',
};

// Screen columns, not UTF-16 units: wide characters and colour codes would otherwise size columns wrongly.

/** Shrinks the widest columns until the row fits `width`. */
export function fitWidths(natural: number[], width: number): number[] {
  const widths = [...natural];
  const total = () => widths.reduce((a, b) => a + b, 0) + GAP * (widths.length - 1);
  while (total() > width) {
    const widest = widths.indexOf(Math.max(...widths));
    if (widths[widest]! <= MIN_COL) break;
    widths[widest] = Math.max(MIN_COL, widths[widest]! - (total() - width));
  }
  return widths;
}

export function isTerminal(stream: OutStream): boolean {
  return stream.isTTY === true;
}

export function renderTable(ctx: Context, spec: TableSpec, stream: OutStream = ctx.io.stdout): string {
  return formatTable(spec, { tty: isTerminal(stream), columns: stream.columns || 80, color: colorEnabled(ctx, stream) });
}

/** Where a table goes: a terminal of `columns` (with or without colour), or a pipe. */
export interface TableLayout {
  tty: boolean;
  columns: number;
  color: boolean;
}

/** The same table as renderTable, from the layout alone (pure, for views rendered ahead of time and for tests). */
export function formatTable(spec: TableSpec, layout: TableLayout): string {
  const rows = spec.rows.map((r) => r.map((c) => sanitizeLine(String(c))));
  if (!layout.tty) return rows.map((r) => r.join('\t') + '\n').join('');
  const c = new Chalk({ level: layout.color ? 1 : 0 });
  const head = spec.head.map((h) => c.bold(h));
  const natural = spec.head.map((h, i) => Math.max(visibleWidth(h), ...rows.map((r) => visibleWidth(r[i] ?? ''))));
  const widths = fitWidths(natural, layout.columns - 1);
  const table = new Table({
    head,
    chars: NO_BORDER,
    // cli-table3 counts padding inside colWidths; the last column's padding is trimmed below.
    colWidths: widths.map((w) => w + GAP),
    colAligns: spec.head.map((_, i) => (spec.right?.includes(i) ? 'right' : 'left')),
    wordWrap: false,
    truncate: '…',
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': GAP, compact: true },
  });
  for (const r of rows) table.push(r);
  // When even the narrowest columns overflow, the line is cut rather than left for the terminal to wrap.
  return table.toString().split('\n').map((l) => fitLine(l.trimEnd(), layout.columns - 1)).join('\n') + '\n';
}
