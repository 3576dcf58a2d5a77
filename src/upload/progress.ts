// What an upload tells the user while it runs, on stderr: a live line on a terminal, a plain line every few
// seconds and at each part's end in CI logs, JSON events for dashboards, or nothing with --quiet.
import type { Context } from '../context.js';
import { ApiError } from '../errors.js';
import { formatBytes, formatDuration, formatRate } from '../output/format.js';
import { jsonLine } from '../output/json.js';
import { canAnimate } from '../output/ci.js';
import type { Part } from './plan.js';

export type ProgressFlag = 'auto' | 'plain' | 'json' | 'none';
export type ProgressMode = 'tty' | 'plain' | 'json' | 'none';

export function progressMode(ctx: Context, flag: ProgressFlag): ProgressMode {
  if (flag === 'json' || flag === 'none' || flag === 'plain') return flag;
  if (ctx.global.quiet) return 'none';
  return canAnimate(ctx) ? 'tty' : 'plain';
}

const PLAIN_EVERY_MS = 5_000;
const JSON_EVERY_MS = 1_000;
const TTY_EVERY_MS = 150;

interface Spinner {
  text: string;
  start(): Spinner;
  stop(): Spinner;
  clear(): Spinner;
  render(): Spinner;
}

export class UploadProgress {
  private sent = 0;
  private doneParts: number;
  private readonly started = performance.now();
  private timer?: NodeJS.Timeout;
  private spinner?: Spinner;

  constructor(
    private readonly ctx: Context,
    private readonly mode: ProgressMode,
    private readonly total: number,
    private readonly totalParts: number,
    /** Bytes and parts already up from an earlier run (resume). */
    private readonly resumedBytes: number,
    resumedParts: number,
  ) {
    this.doneParts = resumedParts;
  }

  async start(file: string): Promise<void> {
    const { mode, ctx } = this;
    if (mode === 'json') {
      this.emit({ type: 'start', file, bytes: this.total, parts: this.totalParts, resumed_parts: this.doneParts, resumed_bytes: this.resumedBytes });
      this.timer = setInterval(() => this.emit({ type: 'progress', ...this.figures() }), JSON_EVERY_MS);
    } else if (mode === 'plain') {
      this.timer = setInterval(() => ctx.io.stderr.write(this.line() + '\n'), PLAIN_EVERY_MS);
    } else if (mode === 'tty') {
      const { default: ora } = await import('ora');
      this.spinner = ora({ stream: ctx.io.stderr, isEnabled: true, discardStdin: false, text: this.line() }).start() as Spinner;
      this.timer = setInterval(() => {
        this.spinner!.text = this.line();
      }, TTY_EVERY_MS);
    }
    this.timer?.unref();
  }

  add(delta: number): void {
    this.sent += delta;
  }

  partDone(part: Part): void {
    this.doneParts++;
    if (this.mode === 'json') {
      this.emit({ type: 'part', part: part.number, bytes: part.length, done_parts: this.doneParts, parts: this.totalParts });
    } else if (this.mode === 'plain') {
      this.ctx.io.stderr.write(`part ${part.number}/${this.totalParts} done; ${this.line()}\n`);
    }
  }

  retry(part: Part, attempt: number, error: Error, waitMs: number): void {
    const why = error instanceof ApiError ? `HTTP ${error.status} ${error.code}` : error.message;
    if (this.mode === 'json') {
      this.emit({ type: 'retry', part: part.number, attempt, wait_ms: waitMs, error: why });
      return;
    }
    if (this.mode === 'none') return;
    const line = `part ${part.number}: attempt ${attempt} failed (${why}); retrying in ${formatDuration(waitMs)}`;
    this.spinner?.clear();
    this.ctx.io.stderr.write(line + '\n');
    this.spinner?.render();
  }

  /** Ends the display; `result` is given for a completed upload. */
  stop(result?: Record<string, unknown>): void {
    clearInterval(this.timer);
    this.spinner?.stop();
    if (result && this.mode === 'json') this.emit({ type: 'complete', ...result });
  }

  private figures() {
    const elapsed = (performance.now() - this.started) / 1000;
    const rate = elapsed > 0 ? this.sent / elapsed : 0;
    const bytes = this.resumedBytes + this.sent;
    const remaining = this.total - bytes;
    return {
      bytes_sent: bytes,
      bytes_total: this.total,
      percent: this.total ? Math.floor((1000 * bytes) / this.total) / 10 : 100,
      rate_bytes_per_s: Math.round(rate),
      eta_s: rate > 0 ? Math.ceil(remaining / rate) : null,
      done_parts: this.doneParts,
      parts: this.totalParts,
    };
  }

  private line(): string {
    const f = this.figures();
    const eta = f.eta_s === null ? '' : `, ETA ${formatDuration(f.eta_s * 1000)}`;
    return `uploading ${f.percent.toFixed(1)}% (${formatBytes(f.bytes_sent)} of ${formatBytes(f.bytes_total)}) at ${formatRate(f.rate_bytes_per_s)}${eta}, ${f.done_parts}/${f.parts} parts`;
  }

  private emit(event: Record<string, unknown>): void {
    this.ctx.io.stderr.write(jsonLine({ ...event, time: new Date(this.ctx.now()).toISOString() }));
  }
}
