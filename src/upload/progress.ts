// The one progress display for transfers (build push uploads, history export downloads), on stderr: a live line
// on a terminal, plain lines in CI logs, one JSON object per line for dashboards, or nothing with --quiet.
// An upload goes through phases a person can see: creating → uploading → completing → done.
import type { BaseContext } from '../base-context.js';
import { ApiError, CliError } from '../errors.js';
import { formatBytes, formatDuration, formatRate } from '../output/format.js';
import { eventLine } from '../output/json.js';
import { canAnimate } from '../output/ci.js';
import { failureWords, retryLine, type RetryNotice } from '../api/transport.js';
import type { Part } from './plan.js';

export type ProgressFlag = 'auto' | 'plain' | 'json' | 'none';
export type ProgressMode = 'tty' | 'plain' | 'json' | 'none';

export function progressMode(ctx: BaseContext, flag: ProgressFlag): ProgressMode {
  if (flag === 'json' || flag === 'none' || flag === 'plain') return flag;
  if (ctx.global.quiet) return 'none';
  return canRedraw(ctx) ? 'tty' : 'plain';
}

/**
 * A live line needs a terminal of known width: a pseudo-terminal without a window size (script(1) under a
 * harness, `docker run -t` in some CI) reports 0 columns, and the spinner would count its line as endless.
 */
export function canRedraw(ctx: BaseContext): boolean {
  return canAnimate(ctx) && (ctx.io.stderr.columns ?? 0) > 0;
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

type Phase = 'idle' | 'creating' | 'uploading' | 'downloading' | 'completing' | 'done';

export interface TransferStart {
  /** What is moving, as the user named it. */
  file: string;
  /** Total bytes; undefined when a download does not say. */
  total?: number;
  parts?: number;
  /** Bytes and parts already up from an earlier run (resume). */
  resumedBytes?: number;
  resumedParts?: number;
}

export class TransferProgress {
  private phase: Phase = 'idle';
  private label = '';
  /** Bytes moved by this run only: the rate never counts what an earlier run sent. */
  private sent = 0;
  private total?: number;
  private parts = 0;
  private doneParts = 0;
  private resumedBytes = 0;
  private started = 0;
  private timer?: NodeJS.Timeout;
  private spinner?: Spinner;

  constructor(
    private readonly ctx: BaseContext,
    readonly mode: ProgressMode,
  ) {}

  /** Starts the live display (a spinner on a terminal); call once, before the first phase. */
  async open(): Promise<void> {
    if (this.mode !== 'tty') return;
    const { default: ora } = await import('ora');
    this.spinner = ora({ stream: this.ctx.io.stderr, isEnabled: true, discardStdin: false, text: '' }) as Spinner;
  }

  /** A line for a person (above the live line on a terminal), or `event` as JSON under --progress json. */
  notice(message: string, event: Record<string, unknown> = { type: 'notice', message }): void {
    if (this.mode === 'json') return this.emit(event);
    if (this.mode === 'tty') return this.above(message);
    this.ctx.info(message);
  }

  /** The build is being created (upload only): the spinner's first words on a terminal, else a line or an event. */
  creating(tag: string): void {
    const label = `Creating build ${tag}…`;
    if (this.mode === 'tty') return this.setPhase('creating', label);
    this.phase = 'creating';
    if (this.mode === 'json') this.emit({ type: 'create', tag });
    else if (this.mode === 'plain') this.ctx.io.stderr.write(label + '\n');
  }

  /** Bytes start to move. */
  start(s: TransferStart, direction: 'uploading' | 'downloading' = 'uploading'): void {
    this.total = s.total;
    this.parts = s.parts ?? 0;
    this.doneParts = s.resumedParts ?? 0;
    this.resumedBytes = s.resumedBytes ?? 0;
    this.started = performance.now();
    this.setPhase(direction);
    if (this.mode === 'json') {
      this.emit({ type: 'start', file: s.file, bytes: s.total ?? null, parts: this.parts, resumed_parts: this.doneParts, resumed_bytes: this.resumedBytes });
      this.every(JSON_EVERY_MS, () => this.emit({ type: 'progress', ...this.figures() }));
    } else if (this.mode === 'plain') {
      this.every(PLAIN_EVERY_MS, () => this.ctx.io.stderr.write(this.line() + '\n'));
    } else if (this.mode === 'tty') {
      this.spinner!.text = this.line();
      this.spinner!.start().render();
      this.every(TTY_EVERY_MS, () => (this.spinner!.text = this.line()));
    }
  }

  add(delta: number): void {
    this.sent += delta;
  }

  partDone(part: Part): void {
    this.doneParts++;
    if (this.mode === 'json') {
      this.emit({ type: 'part', part: part.number, bytes: part.length, done_parts: this.doneParts, parts: this.parts });
    } else if (this.mode === 'plain') {
      this.ctx.io.stderr.write(`part ${part.number} done (${this.doneParts}/${this.parts} complete)\n`);
    }
  }

  /** A part's attempt failed and will be made again. */
  retry(part: Part, attempt: number, error: Error, waitMs: number): void {
    const why = failureWords(error);
    this.notice(`part ${part.number}: attempt ${attempt} failed (${why}); retrying in ${formatDuration(waitMs)}`, {
      type: 'retry',
      part: part.number,
      attempt,
      wait_ms: waitMs,
      error: why,
    });
  }

  /** An API call (create, complete) failed and will be sent again. */
  apiRetry(n: RetryNotice, call: string): void {
    this.notice(retryLine(n), { type: 'retry', call, attempt: n.attempt - 1, wait_ms: n.waitMs, error: failureWords(n.error) });
  }

  /** Every byte is up; the service is assembling the upload. */
  completing(): void {
    // The last figures of the transfer, then the phase that follows it: no progress event or line after them.
    clearInterval(this.timer);
    if (this.mode === 'json') this.emit({ type: 'completing', ...this.figures() });
    else if (this.mode === 'plain') this.ctx.io.stderr.write(`${this.line()}\ncompleting the upload…\n`);
    this.setPhase('completing', 'completing the upload…');
  }

  /** Ends the display with a success; `result` goes into the JSON `complete` event. */
  done(result: Record<string, unknown>): void {
    this.stop();
    this.phase = 'done';
    if (this.mode === 'json') this.emit({ type: 'complete', ...result });
  }

  /** Ends the display with a failure: under --progress json the error is an event too, and printed nowhere else. */
  fail(err: unknown): void {
    this.stop();
    if (this.mode !== 'json' || !(err instanceof CliError)) return;
    // The service's (or the object store's) error code, where there is one, for a script to branch on.
    const answer = err instanceof ApiError ? err : err.cause instanceof ApiError ? err.cause : undefined;
    const code = answer ? { code: answer.code, status: answer.status } : {};
    this.emit({ type: 'error', message: err.message, ...code, ...(err.hint ? { hint: err.hint } : {}), exit_code: err.exitCode });
    err.reported = true;
  }

  /** Stops every timer and the spinner; safe to call more than once. */
  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.spinner?.stop();
  }

  /** This run's throughput, in bytes per second of the transfer phase. */
  rate(): number {
    const elapsed = this.started ? (performance.now() - this.started) / 1000 : 0;
    return elapsed > 0 ? this.sent / elapsed : 0;
  }

  private every(ms: number, fn: () => void): void {
    clearInterval(this.timer);
    this.timer = setInterval(fn, ms);
    this.timer.unref();
  }

  private setPhase(phase: Phase, label = ''): void {
    this.phase = phase;
    this.label = label;
    if (this.spinner && label) {
      this.spinner.text = label;
      this.spinner.start().render();
    }
  }

  /** Writes a line above the live one. */
  private above(line: string): void {
    this.spinner?.clear();
    this.ctx.io.stderr.write(line + '\n');
    if (this.spinner && this.phase !== 'idle' && this.phase !== 'done') this.spinner.render();
  }

  private figures() {
    const rate = this.rate();
    const bytes = this.resumedBytes + this.sent;
    const total = this.total;
    return {
      bytes_sent: bytes,
      bytes_total: total ?? null,
      percent: total ? Math.floor((1000 * bytes) / total) / 10 : null,
      rate_bytes_per_s: Math.round(rate),
      eta_s: rate > 0 && total !== undefined ? Math.ceil((total - bytes) / rate) : null,
      ...(this.parts ? { done_parts: this.doneParts, parts: this.parts } : {}),
    };
  }

  private line(): string {
    if (this.phase === 'completing' || this.phase === 'creating') return this.label;
    const f = this.figures();
    const verb = this.phase === 'downloading' ? 'downloading' : 'uploading';
    // Nothing left is no ETA: `ETA 0 ms` beside 100% says nothing true.
    const eta = f.eta_s === null || f.eta_s === 0 ? '' : `, ETA ${formatDuration(f.eta_s * 1000)}`;
    const amount = f.bytes_total === null ? formatBytes(f.bytes_sent) : `${f.percent!.toFixed(1)}% (${formatBytes(f.bytes_sent)} of ${formatBytes(f.bytes_total)})`;
    const parts = this.parts ? `, ${f.done_parts}/${f.parts} parts` : '';
    return `${verb} ${amount} at ${formatRate(f.rate_bytes_per_s)}${eta}${parts}`;
  }

  private emit(event: Record<string, unknown>): void {
    this.ctx.io.stderr.write(eventLine(this.ctx, event));
  }
}
