import type { Context } from '../context.js';

/** The one JSON document a `--json` command puts on stdout. */
export function writeJson(ctx: Context, value: unknown): void {
  ctx.io.stdout.write(JSON.stringify(value, null, 2) + '\n');
}

/** One line of a JSON-lines stream (watch modes, progress events). */
export function jsonLine(value: unknown): string {
  return JSON.stringify(value) + '\n';
}
