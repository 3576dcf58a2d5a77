import { Chalk, type ChalkInstance } from 'chalk';
import type { BaseContext } from '../base-context.js';
import type { OutStream } from '../shared/io.js';

/**
 * Colour for one stream: --no-color wins, then FORCE_COLOR, then NO_COLOR and TERM=dumb, then whether the
 * stream is a terminal.
 */
export function colorEnabled(ctx: BaseContext, stream: OutStream): boolean {
  if (!ctx.global.color) return false;
  const force = ctx.env.FORCE_COLOR;
  if (force !== undefined && force !== '') return force !== '0' && force !== 'false';
  if (ctx.env.NO_COLOR) return false;
  if (ctx.env.TERM === 'dumb') return false;
  return stream.isTTY === true;
}

export function styler(ctx: BaseContext, stream: OutStream = ctx.io.stdout): ChalkInstance {
  return new Chalk({ level: colorEnabled(ctx, stream) ? 1 : 0 });
}
