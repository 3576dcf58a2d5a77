// One table renderer: in a terminal, aligned borderless columns that fit the width (cells cut with "…", never
// wrapped; ids never cut: other columns shrink, then drop, and a note says which); piped, tab-separated rows
// without a header and without colour, for scripts. A screenful is laid out by cli-table3; beyond that the same
// fixed-width layout is written in chunks, so 200,000 rows take the time of writing them (cli-table3 lays out one
// huge table in quadratic time).
import { Chalk } from 'chalk';
import Table from 'cli-table3';
import type { BaseContext } from '../base-context.js';
import type { OutStream } from '../shared/io.js';
import { colorEnabled } from './color.js';
import { fitLine, PRINTABLE_ASCII, visibleWidth } from './format.js';
import { sanitizeLine } from './sanitize.js';

/**
 * Rows as an array, or made on demand from anything with a length and `at` (a view of 200,000 rows then never
 * holds every formatted cell at once: each row is made when it is measured and again when it is written).
 */
export interface TableRows {
  readonly length: number;
  at(index: number): readonly (string | number | undefined)[] | undefined;
}

export interface TableSpec {
  head: string[];
  rows: TableRows;
  /** Columns to align right (numbers). */
  right?: number[];
  /** Columns never cut nor dropped: the ids a person copies into the next command. */
  keep?: number[];
  /** Columns that may be cut to fit (names, free text); by default every column not kept. */
  shrink?: number[];
  /** Columns left out, first to last, when shrinking is not enough (a note names them). */
  drop?: number[];
}

/** Where a table goes: a terminal of `columns` (with or without colour), or a pipe. */
export interface TableLayout {
  tty: boolean;
  columns: number;
  color: boolean;
  /** Every column at its full width, whatever the terminal (--wide). */
  wide?: boolean;
}

const GAP = 2;
const MIN_COL = 6;
/** Rows laid out by cli-table3; more are streamed. */
export const SCREENFUL = 100;
const CHUNK = 1000;
const NO_BORDER = {
  top: '', 'top-mid': '', 'top-left': '', 'top-right': '',
  bottom: '', 'bottom-mid': '', 'bottom-left': '', 'bottom-right': '',
  left: '', 'left-mid': '', mid: '', 'mid-mid': '', right: '', 'right-mid': '', middle: '',
};

const total = (widths: readonly number[]) => widths.reduce((a, b) => a + b, 0) + GAP * Math.max(0, widths.length - 1);

/** Shrinks the widest columns (only those that may shrink) until the row fits `width`, none below a few columns. */
export function fitWidths(natural: number[], width: number, fixed: readonly boolean[] = []): number[] {
  const widths = [...natural];
  // Each pass brings one column down to fit or to the minimum: at most one pass per column.
  for (let pass = 0; pass < widths.length && total(widths) > width; pass++) {
    let widest = -1;
    widths.forEach((w, i) => {
      if (!fixed[i] && w > MIN_COL && (widest < 0 || w > widths[widest]!)) widest = i;
    });
    if (widest < 0) break;
    widths[widest] = Math.max(MIN_COL, widths[widest]! - (total(widths) - width));
  }
  return widths;
}

export function isTerminal(stream: OutStream): boolean {
  return stream.isTTY === true;
}

export function tableLayout(ctx: BaseContext, stream: OutStream = ctx.io.stdout, wide = false): TableLayout {
  return { tty: isTerminal(stream), columns: stream.columns || 80, color: colorEnabled(ctx, stream), wide };
}

export function renderTable(ctx: BaseContext, spec: TableSpec, stream: OutStream = ctx.io.stdout, wide = false): string {
  return formatTable(spec, tableLayout(ctx, stream, wide));
}

/** The same table as renderTable, from the layout alone (pure, for views rendered ahead of time and for tests). */
export function formatTable(spec: TableSpec, layout: TableLayout): string {
  let text = '';
  for (const chunk of tableChunks(spec, layout)) text += chunk;
  return text;
}

interface Plan {
  /** Indexes of the columns shown, in order. */
  shown: number[];
  widths: number[];
  /** Lines are cut here: the terminal's width, or past it when a kept column needs it. */
  limit: number;
  dropped: string[];
}

/** A cell as it is shown: server text made safe for a terminal, on one line. */
const cellText = (value: string | number | undefined) => (value === undefined ? '' : sanitizeLine(String(value)));

/** The screen width of a cell as it is shown (cellText), with one test for the usual printable ASCII cell. */
function cellWidth(value: string | number | undefined): number {
  if (typeof value === 'string' && PRINTABLE_ASCII.test(value)) return value.length;
  return visibleWidth(cellText(value));
}

function plan(spec: TableSpec, layout: TableLayout): Plan {
  const natural = spec.head.map((h) => visibleWidth(h));
  for (let r = 0; r < spec.rows.length; r++) {
    const row = spec.rows.at(r)!;
    for (let i = 0; i < natural.length; i++) {
      const w = cellWidth(row[i]);
      if (w > natural[i]!) natural[i] = w;
    }
  }
  const all = spec.head.map((_, i) => i);
  if (layout.wide) return { shown: all, widths: natural, limit: Infinity, dropped: [] };
  const width = layout.columns - 1;
  const keep = new Set(spec.keep ?? []);
  const shrinks = new Set((spec.shrink ?? all).filter((i) => !keep.has(i)));
  const droppable = (spec.drop ?? []).filter((i) => !keep.has(i) && i < natural.length);
  let shown = all;
  let widths: number[];
  for (;;) {
    widths = fitWidths(shown.map((i) => natural[i]!), width, shown.map((i) => !shrinks.has(i)));
    const next = droppable.find((i) => shown.includes(i));
    if (total(widths) <= width || next === undefined) break;
    shown = shown.filter((i) => i !== next);
  }
  // A column dropped early may fit whole in the room a wider one left when it went (a short STATE beside a long
  // NAME): the last dropped, the most wanted, come back first, none making another column narrower.
  let room = width - total(widths);
  for (const col of [...droppable].reverse()) {
    if (shown.includes(col) || natural[col]! + GAP > room) continue;
    room -= natural[col]! + GAP;
    const at = shown.filter((i) => i < col).length;
    shown = [...shown.slice(0, at), col, ...shown.slice(at)];
    widths = [...widths.slice(0, at), natural[col]!, ...widths.slice(at)];
  }
  // A kept column is never cut, even when it alone is wider than the terminal.
  let end = 0;
  let keptEnd = 0;
  shown.forEach((col, i) => {
    end += widths[i]! + (i > 0 ? GAP : 0);
    if (keep.has(col)) keptEnd = end;
  });
  const dropped = all.filter((i) => !shown.includes(i)).map((i) => spec.head[i]!);
  // Past a kept column that overflows, the line is cut after it and its gap: `<id> …`.
  const limit = Math.max(width, keptEnd < end ? keptEnd + GAP : keptEnd);
  return { shown, widths, limit, dropped };
}

/** The table in pieces: a screenful in one, more in chunks of rows. */
export function* tableChunks(spec: TableSpec, layout: TableLayout, screenful = SCREENFUL): Generator<string> {
  // Cells are made safe as they are measured and written, never copied whole: a copy of 200,000 rows is mostly
  // work for the garbage collector.
  const rows = spec.rows;
  if (!layout.tty) {
    for (let i = 0; i < rows.length; i += CHUNK) {
      let text = '';
      for (let j = i; j < Math.min(rows.length, i + CHUNK); j++) text += rows.at(j)!.map(cellText).join('\t') + '\n';
      yield text;
    }
    return;
  }
  const c = new Chalk({ level: layout.color ? 1 : 0 });
  const p = plan(spec, layout);
  const right = new Set(spec.right ?? []);
  // Lines only need cutting when the columns alone overflow (the narrowest widths did not fit).
  const overflows = total(p.widths) > p.limit;
  const cut = (line: string) => (overflows ? fitLine(line, p.limit) : line);
  const n = p.dropped.length;
  const them = `--wide shows ${n === 1 ? 'it' : 'them'}`;
  let note = n ? `${p.dropped.join(', ')} left out to fit: ${them}` : '';
  if (visibleWidth(note) > layout.columns - 1) note = fitLine(`${n} column${n === 1 ? '' : 's'} left out: ${them}`, layout.columns - 1);
  if (note) note = c.dim(note) + '\n';
  if (rows.length <= screenful) {
    yield viaCliTable(spec, p, right, c).map((l) => cut(l) + '\n').join('') + note;
    return;
  }
  // Fixed widths, a row at a time: each cell cut to its column and padded, as cli-table3 does. Plain loops and
  // string appends: a row is written without arrays or closures of its own.
  const shown = p.shown;
  const widths = p.widths;
  const alignRight = shown.map((col) => right.has(col));
  const spaces = ' '.repeat(Math.max(GAP, ...widths));
  const gap = spaces.slice(0, GAP);
  const line = (cells: readonly (string | number | undefined)[], safe: boolean) => {
    let text = '';
    for (let i = 0; i < shown.length; i++) {
      const w = widths[i]!;
      const value = cells[shown[i]!];
      let cell: string;
      let width: number;
      if (typeof value === 'string' && PRINTABLE_ASCII.test(value)) {
        cell = value;
        width = value.length;
      } else {
        cell = safe ? String(value ?? '') : cellText(value);
        width = visibleWidth(cell);
      }
      if (width > w) {
        cell = fitLine(cell, w);
        width = visibleWidth(cell);
      }
      const pad = w > width ? spaces.slice(0, w - width) : '';
      if (i > 0) text += gap;
      text += alignRight[i] ? pad + cell : cell + pad;
    }
    return cut(text.trimEnd()) + '\n';
  };
  // The head is ours, with its colour: written as is.
  yield line(spec.head.map((h) => c.bold(h)), true);
  for (let i = 0; i < rows.length; i += CHUNK) {
    let text = '';
    for (let j = i; j < Math.min(rows.length, i + CHUNK); j++) text += line(rows.at(j)!, false);
    yield text;
  }
  yield note;
}

function viaCliTable(spec: TableSpec, p: Plan, right: Set<number>, c: InstanceType<typeof Chalk>): string[] {
  const table = new Table({
    head: p.shown.map((i) => c.bold(spec.head[i]!)),
    chars: NO_BORDER,
    // cli-table3 counts padding inside colWidths; the last column's padding is trimmed below.
    colWidths: p.widths.map((w) => w + GAP),
    colAligns: p.shown.map((i) => (right.has(i) ? 'right' : 'left')),
    wordWrap: false,
    truncate: '…',
    style: { head: [], border: [], 'padding-left': 0, 'padding-right': GAP, compact: true },
  });
  for (let r = 0; r < spec.rows.length; r++) {
    const row = spec.rows.at(r)!;
    table.push(p.shown.map((i) => cellText(row[i])));
  }
  return table.toString().split('\n').map((l) => l.trimEnd());
}
