// A token bucket shared by every part, so --limit-rate caps the whole upload, not each connection. It starts
// empty and lends against the future: bytes released by time t never exceed rate × t, so the rate a person
// sees never runs ahead of the limit.
import { sleep } from '../shared/retry.js';

export class RateLimiter {
  private tokens = 0;
  private last = performance.now();
  private queue: Promise<void> = Promise.resolve();
  /** How long callers have been held back in all, in ms: little of it means the connections, not the limit, set the pace. */
  waitedMs = 0;

  /** `rate` in bytes per second; an idle bucket fills up to a tenth of a second's worth. */
  constructor(readonly rate: number) {}

  /** Resolves when `bytes` may be sent; callers are served in order. */
  take(bytes: number, signal?: AbortSignal): Promise<void> {
    const turn = this.queue.then(() => this.wait(bytes, signal));
    this.queue = turn.catch(() => {});
    return turn;
  }

  private async wait(bytes: number, signal?: AbortSignal): Promise<void> {
    const now = performance.now();
    this.tokens = Math.min(this.rate / 10, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    this.tokens -= bytes;
    if (this.tokens >= 0) return;
    const ms = (-this.tokens / this.rate) * 1000;
    this.waitedMs += ms;
    // sleep() removes its abort listener when it resolves: no listener accumulates over thousands of waits.
    await sleep(ms, signal);
  }
}

