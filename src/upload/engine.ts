// The bounded-concurrency part uploader. Each part goes to its presigned URL (no bearer token) with an explicit
// Content-Length, through transport.ts's retry rules; the first fatal error aborts every part in flight.
//
// The send path is built for CPU: the file is opened once and read with positional reads into a fixed pool of
// reusable buffers, one per part in flight; each part's body is an async generator that hands its buffer to undici
// and refills it when undici has written it to the connection. Progress and the stall watchdog count bytes there,
// where they leave the process.
import fs from 'node:fs';
import pLimit, { type LimitFunction } from 'p-limit';
import type { Dispatcher } from 'undici';
import { USER_AGENT } from '../api/client.js';
import { isRetryable, readText, responseError, send, toNetworkError, withRetries } from '../api/transport.js';
import { readBuffer } from '../shared/read-buffer.js';
import type { RetryPolicy } from '../shared/retry.js';
import { ApiError, UploadError } from '../errors.js';
import type { Part } from './plan.js';
import type { RateLimiter } from './ratelimit.js';

export interface UploadEvents {
  /** Bytes that left since the last call; negative when a failed attempt's bytes are taken back. */
  progress?(delta: number): void;
  partDone?(part: Part): void;
  retry?(part: Part, attempt: number, error: Error, waitMs: number): void;
}

export interface UploadJob {
  file: string;
  parts: Part[];
  /** How many parts the whole upload has (errors name a part's place in it, not among this run's). */
  totalParts: number;
  contentType?: string;
  concurrency: number;
  retry: RetryPolicy;
  /** A part whose bytes stop moving for this long counts as a network error. */
  stallMs: number;
  /** Caps the bytes per second of all parts together. */
  limiter?: RateLimiter;
  /** The process's connections for a part's URL (direct, or through HTTPS_PROXY and the like). */
  dispatcher(url: URL): Dispatcher;
  signal: AbortSignal;
  events?: UploadEvents;
  /** A read slower than this (ms) means the file comes from the disk, not the page cache (see readAt). */
  slowReadMs?: number;
}

// 1 MiB writes: few syscalls, and one buffer per part in flight keeps RSS flat (measured: bench/upload.js).
const BUFFER_SIZE = 1024 * 1024;
// Above any socket's high-water mark (16 KiB on Node 20, 64 KiB on 22): a write this large always waits for 'drain'.
const COPY_BELOW = 256 * 1024;

class StallError extends Error {
  readonly code = 'STALLED';
}

/** Buffers handed out and given back; a waiter is served when one comes back. */
class BufferPool {
  private readonly free: Buffer[] = [];
  private readonly waiters: ((b: Buffer) => void)[] = [];

  constructor(count: number, readonly size: number) {
    for (let i = 0; i < count; i++) this.free.push(readBuffer(size));
  }

  take(signal: AbortSignal): Promise<Buffer> {
    const b = this.free.pop();
    if (b) return Promise.resolve(b);
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        this.waiters.splice(this.waiters.indexOf(serve), 1);
        reject(signal.reason);
      };
      const serve = (buf: Buffer) => {
        signal.removeEventListener('abort', onAbort);
        resolve(buf);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiters.push(serve);
    });
  }

  give(b: Buffer): void {
    const waiter = this.waiters.shift();
    if (waiter) waiter(b);
    else this.free.push(b);
  }
}

export async function uploadParts(job: UploadJob): Promise<void> {
  const group = new AbortController();
  const onAbort = () => group.abort(job.signal.reason);
  job.signal.addEventListener('abort', onAbort, { once: true });
  const concurrency = Math.max(1, Math.min(job.concurrency, job.parts.length));
  // Under a rate limit, parts in parallel share the rate and buy nothing, and an interruption would keep none of
  // them whole: one part at a time, and another only while the connections (not the limit) set the pace.
  const limit = pLimit(job.limiter ? 1 : concurrency);
  const ramp = job.limiter && concurrency > 1 ? rampUnderLimit(job.limiter, limit, concurrency) : undefined;
  const sender: Sender = {
    job,
    fd: await fs.promises.open(job.file, 'r'),
    pool: new BufferPool(Math.max(1, concurrency), chunkSize(job.limiter)),
    syncReads: true,
  };
  try {
    await Promise.all(
      job.parts.map((part) =>
        limit(async () => {
          if (group.signal.aborted) return;
          try {
            await uploadPart(sender, part, group.signal);
          } catch (err) {
            limit.clearQueue();
            group.abort(err);
            throw err;
          }
        }),
      ),
    );
  } catch (err) {
    throw job.signal.aborted ? job.signal.reason : err;
  } finally {
    clearInterval(ramp);
    job.signal.removeEventListener('abort', onAbort);
    group.abort();
    await sender.fd.close();
  }
}

const RAMP_EVERY_MS = 2_000;

/**
 * Every couple of seconds, one more part in flight (up to `max`) when the limiter held the senders back less than
 * a tenth of the time: the parts already in flight cannot reach the rate on their own (a long, slow path).
 */
function rampUnderLimit(limiter: RateLimiter, limit: LimitFunction, max: number): NodeJS.Timeout {
  let waited = limiter.waitedMs;
  const timer = setInterval(() => {
    const held = limiter.waitedMs - waited;
    waited = limiter.waitedMs;
    if (held < RAMP_EVERY_MS / 10 && limit.activeCount === limit.concurrency && limit.pendingCount > 0 && limit.concurrency < max) limit.concurrency++;
  }, RAMP_EVERY_MS);
  timer.unref();
  return timer;
}

/**
 * Under --limit-rate, writes small enough that the limiter can pace them and progress moves: about an eighth of a
 * second each, even at 1K (a 16 KiB floor held the first byte back for 16 s there).
 */
function chunkSize(limiter: RateLimiter | undefined): number {
  if (!limiter) return BUFFER_SIZE;
  return Math.max(128, Math.min(BUFFER_SIZE, Math.floor(limiter.rate / 8)));
}

interface Sender {
  job: UploadJob;
  fd: fs.promises.FileHandle;
  pool: BufferPool;
  /** Reads are made on the event loop until one of them is slow (see readAt). */
  syncReads: boolean;
}

const SLOW_READ_MS = 4;

/**
 * Reads `length` bytes at `position`. A build just written is in the page cache, where a read is a memory copy: made
 * on the event loop it costs that copy alone, while a hop through libuv's thread pool costs 0.15–0.2 CPU-s more per
 * GiB on two cores (measured with bench/upload.js). A slow read means the disk is being read: from then on reads go
 * to the thread pool, so the event loop keeps serving the other parts while the disk works.
 */
async function readAt(s: Sender, buf: Buffer, length: number, position: number): Promise<number> {
  if (!s.syncReads) return (await s.fd.read(buf, 0, length, position)).bytesRead;
  const started = performance.now();
  const read = fs.readSync(s.fd.fd, buf, 0, length, position);
  if (performance.now() - started > (s.job.slowReadMs ?? SLOW_READ_MS)) s.syncReads = false;
  return read;
}

async function uploadPart(s: Sender, part: Part, signal: AbortSignal): Promise<void> {
  const { job } = s;
  let attempts = 0;
  try {
    await withRetries(
      {
        policy: job.retry,
        signal,
        idempotent: true,
        onRetry: (n) => job.events?.retry?.(part, n.attempt - 1, n.error, n.waitMs),
      },
      async (n) => {
        attempts = n;
        let sent = 0;
        try {
          await putOnce(s, part, signal, (bytes) => {
            sent += bytes;
            job.events?.progress?.(bytes);
          });
        } catch (err) {
          if (sent) job.events?.progress?.(-sent);
          throw err;
        }
      },
    );
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    const retried = isRetryable(err, true) && attempts > 1;
    const why = err instanceof ApiError ? (err.message.startsWith(`${err.status} `) ? err.message : `${err.status} ${err.code}: ${err.message}`) : (err as Error).message;
    const error = new UploadError(`part ${part.number} of ${job.totalParts} failed${retried ? ` after ${attempts} attempts` : ''}: ${why}`, undefined, { cause: err });
    if (err instanceof ApiError && err.hint) error.hint = err.hint;
    throw error;
  }
  job.events?.partDone?.(part);
}

/** One PUT of one part: its body read with positional reads into one pooled buffer, sent as it is read. */
async function putOnce(s: Sender, part: Part, signal: AbortSignal, moved: (n: number) => void): Promise<void> {
  const { job } = s;
  const url = new URL(part.url);
  const buf = await s.pool.take(signal);
  const attempt = new AbortController();
  const onAbort = () => attempt.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let last = performance.now();
  const watchdog = setInterval(() => {
    if (performance.now() - last > job.stallMs) attempt.abort(new StallError(`no bytes moved for ${Math.round(job.stallMs / 1000)} s`));
  }, Math.min(1000, job.stallMs));

  // `busy` while a read fills the buffer or undici holds a piece of it; once `over`, the body leaves it alone.
  let busy = false;
  let over = false;
  let sent = 0;
  // The file's own failure: undici ends the request with it, and it must not read as the network's.
  let unreadable: UploadError | undefined;
  const fail = (err: UploadError) => {
    unreadable = err;
    attempt.abort(err);
    return err;
  };
  async function* body(): AsyncGenerator<Buffer> {
    for (let offset = 0; offset < part.length; ) {
      const want = Math.min(buf.length, part.length - offset);
      if (job.limiter) await job.limiter.take(want, attempt.signal);
      if (over) return;
      busy = true;
      let read: number;
      try {
        read = await readAt(s, buf, want, part.offset + offset);
      } catch (err) {
        throw fail(new UploadError(`cannot read ${job.file}: ${(err as Error).message}`, undefined, { cause: err }));
      } finally {
        busy = false;
      }
      if (read !== want) throw fail(new UploadError(`${job.file} became shorter during the upload; the build was not completed`, 'push it again once the file is final'));
      if (over) return;
      offset += want;
      // undici asks for the next piece once the socket has taken this one whole (it waits for 'drain' when a write
      // fills the socket's buffer, which a piece this large always does): then the bytes have left, and the buffer
      // is free again. A small piece may not fill it, so it goes as a copy.
      busy = true;
      yield want >= COPY_BELOW ? buf.subarray(0, want) : Buffer.from(buf.subarray(0, want));
      busy = false;
      if (over) return;
      sent += want;
      last = performance.now();
      moved(want);
    }
  }

  const headers: Record<string, string> = { 'content-length': String(part.length), 'user-agent': USER_AGENT };
  if (job.contentType) headers['content-type'] = job.contentType;
  try {
    const res = await send(url, { method: 'PUT', headers, body: body(), dispatcher: job.dispatcher(url), signal: attempt.signal });
    last = performance.now();
    const text = await readText(res.body, 64 * 1024);
    if (res.statusCode < 200 || res.statusCode >= 300) throw responseError(res.statusCode, res.headers, text, { presigned: 'part' });
    // Accepted: the last piece's 'drain' may still be on its way; the service has every byte.
    if (sent < part.length) moved(part.length - sent);
  } catch (err) {
    if (signal.aborted) throw signal.reason;
    if (unreadable) throw unreadable;
    if (err instanceof ApiError) throw err;
    throw toNetworkError(attempt.signal.reason instanceof StallError ? attempt.signal.reason : err, url);
  } finally {
    clearInterval(watchdog);
    signal.removeEventListener('abort', onAbort);
    over = true;
    attempt.abort();
    // A buffer a read or the socket may still hold stays with them; the pool gets a new one.
    s.pool.give(busy ? readBuffer(s.pool.size) : buf);
  }
}
