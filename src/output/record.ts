// A few named values about one thing (a lobby, a build): `Label  value` lines for people, `key<TAB>value`
// lines for scripts.
import type { Context, OutStream } from '../context.js';
import { styler } from './color.js';
import { sanitizeLine } from './sanitize.js';

export interface Field {
  label: string;
  key: string;
  value: string | number;
}

export function renderRecord(ctx: Context, fields: Field[], stream: OutStream = ctx.io.stdout): string {
  if (stream.isTTY !== true) return fields.map((f) => `${f.key}\t${sanitizeLine(String(f.value))}\n`).join('');
  const c = styler(ctx, stream);
  const width = Math.max(...fields.map((f) => f.label.length));
  return fields.map((f) => `${c.dim(f.label.padEnd(width))}  ${sanitizeLine(String(f.value))}\n`).join('');
}
