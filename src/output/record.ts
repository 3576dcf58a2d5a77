// The one key/value renderer: a few named values about one thing (a lobby, a build, a profile, a summary).
// People get `Label  value` lines with the labels aligned; scripts get `key<TAB>value` lines.
import type { BaseContext } from '../base-context.js';
import type { OutStream } from '../shared/io.js';
import { fitLine, visibleWidth } from './format.js';
import { sanitizeLine } from './sanitize.js';
import { fit, paint, viewOptions, type ViewOptions } from './views/options.js';

export interface Field {
  label: string;
  key: string;
  value: string | number;
  /**
   * Never cut (the default: a record's values are ids, tokens and paths, things to copy); when it does not fit
   * beside its label, it gets a line of its own. false: cut to the width like any text.
   */
  whole?: boolean;
}

/** A labelled line for people: [label, value (sanitised already), whole]. */
export type Labelled = [label: string, value: string, whole?: boolean];

/** `Label  value` lines with the labels aligned, each cut to the width; server strings must be sanitised first. */
export function labelled(o: ViewOptions, rows: Labelled[], indent = ''): string {
  const c = paint(o);
  let width = 0;
  for (const [l] of rows) width = Math.max(width, visibleWidth(l));
  return rows
    .map(([l, v, whole]) => {
      const line = `${indent}${c.dim(l.padEnd(width))}  ${v}`;
      if (!whole || !o.tty) return fit(line, o) + '\n';
      if (visibleWidth(line) <= o.columns - 1) return line + '\n';
      // Too long to sit beside its label: alone on the next line, whole, so a triple-click copies all of it.
      return fitLine(`${indent}${c.dim(l)}`, o.columns - 1) + '\n' + v + '\n';
    })
    .join('');
}

/** `key<TAB>value` lines for scripts. */
export function keyValues(rows: [key: string, value: string | number | null | undefined][]): string {
  return rows.map(([k, v]) => `${k}\t${v == null ? '' : sanitizeLine(String(v))}\n`).join('');
}

/** Fields for the stream they go to: labelled lines on a terminal, key/value lines on a pipe. */
export function formatRecord(fields: Field[], o: ViewOptions): string {
  if (!o.tty) return keyValues(fields.map((f) => [f.key, f.value]));
  return labelled(o, fields.map((f) => [f.label, sanitizeLine(String(f.value)), f.whole ?? true]));
}

export function renderRecord(ctx: BaseContext, fields: Field[], stream: OutStream = ctx.io.stdout): string {
  return formatRecord(fields, viewOptions(ctx, stream, false));
}
