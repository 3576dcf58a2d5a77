// The one watch loop behind every --watch: poll, show, wait, until the thing watched is over or Ctrl-C. A terminal
// sees the view redrawn in place with a footer, a pipe lines for what changed, --json the service's body each time
// it changed (as received, so its numbers stay intact).
import type { Context } from '../context.js';
import type { Answer } from '../api/operations.js';
import { sleep } from '../shared/retry.js';
import { InterruptedError } from '../errors.js';
import { reformatJson } from '../output/json.js';
import { LiveFrame, watchFooter } from '../output/views/live.js';
import { viewOptions, type ViewOptions } from '../output/views/options.js';

export interface WatchLoop<T> {
  everyMs: number;
  utc: boolean;
  poll(): Promise<Answer<T>>;
  /** The view for a person, from the answer and the one before it. */
  frame(value: T, previous: T | undefined, view: ViewOptions): string;
  /** For a script: lines for what changed since `previous` ('' for nothing), observed at `at`. */
  lines(value: T, previous: T | undefined, at: number): string;
  /** The exit code once the thing watched is over; undefined to keep watching. */
  done?(value: T): number | undefined;
  /** Nothing on stdout, no view nor lines: the exit code alone says how it ended (`lobby logs --watch -q`). */
  silent?: boolean;
}

/** Whether a watch redraws a view in place (a terminal, not --json). */
export function isLive(ctx: Context): boolean {
  return ctx.io.stdout.isTTY === true && !ctx.global.json;
}

/** Runs the loop; returns its exit code. Ctrl-C (or SIGTERM), the way to end a watch, is no error: 130 (143). */
export async function watch<T>(ctx: Context, loop: WatchLoop<T>): Promise<number> {
  const out = ctx.io.stdout;
  const frame = isLive(ctx) && !loop.silent ? new LiveFrame(out) : undefined;
  let previous: Answer<T> | undefined;
  // The last frame drawn, to draw again at once when the terminal is resized (not at the next poll).
  let redraw: (() => void) | undefined;
  const onResize = () => redraw?.();
  if (frame) out.on('resize', onResize);
  try {
    for (;;) {
      const answer = await loop.poll();
      const code = loop.done?.(answer.value);
      if (frame) {
        const before = previous?.value;
        const at = ctx.now();
        redraw = () => {
          // Redrawn at the new size, but still the answer of `at`: the footer says when it was fetched.
          const view = { ...viewOptions(ctx, out, loop.utc), now: at };
          frame.draw(loop.frame(answer.value, before, view), code === undefined ? watchFooter(view, loop.everyMs) : undefined);
        };
        redraw();
      } else if (loop.silent) {
        // Polled all the same, for the exit code.
      } else if (ctx.global.json) {
        const line = reformatJson(answer.text, 0);
        if (previous === undefined || line !== reformatJson(previous.text, 0)) out.write(line + '\n');
      } else {
        out.write(loop.lines(answer.value, previous?.value, ctx.now()));
      }
      previous = answer;
      if (code !== undefined) return code;
      await sleep(loop.everyMs, ctx.signal);
    }
  } catch (err) {
    if (ctx.signal.aborted && err === ctx.signal.reason && err instanceof InterruptedError) return err.exitCode;
    throw err;
  } finally {
    out.off('resize', onResize);
    frame?.close();
  }
}
