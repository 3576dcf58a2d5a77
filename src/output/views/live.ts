// Redrawing a view in place on a terminal, for the --watch modes: each frame is written in one go over the last
// one (cursor up, each line rewritten and its rest cleared, then anything below cleared), so nothing flickers.
import type { OutStream } from '../../shared/io.js';
import { fitLine, formatTime } from '../format.js';
import { paint, type ViewOptions } from './options.js';

export const HIDE_CURSOR = '\x1b[?25l';
export const SHOW_CURSOR = '\x1b[?25h';

export class LiveFrame {
  private height = 0;
  /** The width the last frame was drawn at. */
  private columns = 0;
  private live = false;
  // A second Ctrl-C exits at once, skipping clean-up: the cursor still comes back.
  private readonly onExit = () => {
    this.stream.write(SHOW_CURSOR);
  };

  constructor(private readonly stream: OutStream) {}

  /**
   * Replaces the previous frame with `text` and, under it after a blank line, `footer`; every line is cut to the
   * width so the line count stays true. A frame taller than the screen loses lines from the bottom of `text`, never
   * the footer (how to stop, when it refreshed).
   */
  draw(text: string, footer?: string): void {
    const columns = this.stream.columns || 80;
    const rows = (this.stream as { rows?: number }).rows;
    const fit = (t: string) => t.replace(/\n$/, '').split('\n').map((l) => fitLine(l, columns - 1));
    let lines = fit(text);
    const tail = footer === undefined ? [] : ['', ...fit(footer)];
    // Lines scrolled off the top cannot be reached again: a frame never grows taller than the screen.
    if (rows && lines.length + tail.length > rows - 1) {
      const room = Math.max(1, rows - 1 - tail.length);
      lines = lines.slice(0, room);
    }
    lines = lines.concat(tail);
    let out = '';
    if (!this.live) {
      out += HIDE_CURSOR;
      this.live = true;
      process.on('exit', this.onExit);
    }
    if (this.height > 0) {
      // After a resize the terminal may have re-wrapped the last frame into more (or fewer) rows than were
      // written: going up by the old count would leave a stale partial copy, so the screen is cleared instead.
      out += columns === this.columns ? `\r\x1b[${this.height}A` : '\x1b[H\x1b[2J';
    }
    out += lines.map((l) => `${l}\x1b[K\n`).join('') + '\x1b[J';
    this.height = lines.length;
    this.columns = columns;
    this.stream.write(out);
  }

  /** Leaves the last frame on screen and gives the cursor back. */
  close(): void {
    if (!this.live) return;
    this.live = false;
    process.off('exit', this.onExit);
    this.stream.write(SHOW_CURSOR);
  }
}

/** The dim last line of a watched view: how often it refreshes, when it last did, and how to stop. */
export function watchFooter(o: ViewOptions, everyMs: number): string {
  const c = paint(o);
  const at = formatTime(o.now, { local: true, utc: o.utc }, 'clock');
  const seconds = everyMs / 1000;
  const every = `${Number.isInteger(seconds) ? seconds : seconds.toFixed(1)} s`;
  return c.dim(`Every ${every} · updated ${at}${o.utc ? ' UTC' : ''} · Ctrl-C to stop`) + '\n';
}
