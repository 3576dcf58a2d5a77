// A token bucket shared by every part, so --limit-rate caps the whole upload, not each connection.
import { Transform, type TransformCallback } from 'node:stream';

export class RateLimiter {
  private tokens: number;
  private last = performance.now();
  private queue: Promise<void> = Promise.resolve();

  /** `rate` in bytes per second; the bucket holds at most one second's worth. */
  constructor(private readonly rate: number) {
    this.tokens = rate;
  }

  /** Resolves when `bytes` may be sent; callers are served in order. */
  take(bytes: number, signal?: AbortSignal): Promise<void> {
    const turn = this.queue.then(() => this.wait(bytes, signal));
    this.queue = turn.catch(() => {});
    return turn;
  }

  private async wait(bytes: number, signal?: AbortSignal): Promise<void> {
    const now = performance.now();
    this.tokens = Math.min(this.rate, this.tokens + ((now - this.last) / 1000) * this.rate);
    this.last = now;
    this.tokens -= bytes;
    if (this.tokens >= 0) return;
    const ms = (-this.tokens / this.rate) * 1000;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(resolve, ms);
      signal?.addEventListener('abort', () => {
        clearTimeout(timer);
        reject(signal.reason);
      }, { once: true });
    });
  }

  /** A pass-through stream that holds each chunk until the bucket allows it. */
  stream(signal?: AbortSignal): Transform {
    return new Transform({
      transform: (chunk: Buffer, _enc, cb: TransformCallback) => {
        this.take(chunk.length, signal).then(() => cb(null, chunk), cb);
      },
    });
  }
}

