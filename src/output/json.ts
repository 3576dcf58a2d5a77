import type { BaseContext } from '../base-context.js';

/** The one JSON document a `--json` command puts on stdout. */
export function writeJson(ctx: BaseContext, value: unknown): void {
  ctx.io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** One line of a JSON-lines stream (watch modes, progress events). */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value) + '\n';
}

/**
 * The service's JSON body as received, re-indented like writeJson (or on one line with `indent` 0) but otherwise
 * untouched: every token is copied as it came, so integers beyond 2^53 keep their digits (JSON.parse would round
 * 9007199254740993 to …992). The text must be valid JSON (the client parsed it already).
 */
export function reformatJson(text: string, indent = 2): string {
  let out = '';
  let depth = 0;
  const newline = () => (indent > 0 ? '\n' + ' '.repeat(indent * depth) : '');
  for (let i = 0; i < text.length; i++) {
    const ch = text[i]!;
    if (ch === '"') {
      // A string, escapes included, copied whole.
      let j = i + 1;
      while (j < text.length && text[j] !== '"') j += text[j] === '\\' ? 2 : 1;
      out += text.slice(i, j + 1);
      i = j;
    } else if (ch === '{' || ch === '[') {
      // An empty object or array stays `{}` / `[]`.
      let j = i + 1;
      while (j < text.length && /\s/.test(text[j]!)) j++;
      if (text[j] === (ch === '{' ? '}' : ']')) {
        out += ch + text[j];
        i = j;
        continue;
      }
      depth++;
      out += ch + newline();
    } else if (ch === '}' || ch === ']') {
      depth--;
      out += newline() + ch;
    } else if (ch === ',') {
      out += ',' + newline();
    } else if (ch === ':') {
      out += indent > 0 ? ': ' : ':';
    } else if (!/\s/.test(ch)) {
      out += ch;
    }
  }
  return out;
}

/** The one JSON document on stdout, as the service wrote it (see reformatJson). */
export function writeJsonText(ctx: BaseContext, text: string): void {
  ctx.io.stdout.write(reformatJson(text) + '\n');
}

/** One event of a JSON-lines stream on stderr (`--progress json`), stamped with the context's clock. */
export function eventLine(ctx: BaseContext, event: Record<string, unknown>): string {
  return jsonLine({ ...event, time: new Date(ctx.now()).toISOString() });
}
