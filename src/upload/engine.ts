// The bounded-concurrency part uploader: each part is streamed from disk with an explicit Content-Length to
// its presigned URL (no bearer token), a fresh stream every attempt, retried on network errors and
// 408/429/5xx with backoff; the first fatal error aborts every part in flight.
import '../api/wasm-flags.js'; // before undici
import fs from 'node:fs';
import { PassThrough, pipeline } from 'node:stream';
import pLimit from 'p-limit';
import { request, type Dispatcher } from 'undici';
import { parseErrorBody, readText, toNetworkError } from '../api/client.js';
import { backoffMs, parseRetryAfter, sleep, type RetryPolicy } from '../api/retry.js';
import { ApiError, NetworkError, UploadError } from '../errors.js';
import type { Part } from './plan.js';
import type { RateLimiter } from './ratelimit.js';

export interface UploadEvents {
  /** Bytes moved since the last call; negative when a failed attempt's bytes are taken back. */
  progress?(delta: number): void;
  partDone?(part: Part): void;
  retry?(part: Part, attempt: number, error: Error, waitMs: number): void;
}

export interface UploadJob {
  file: string;
  parts: Part[];
  contentType?: string;
  concurrency: number;
  dispatcher: Dispatcher;
  retry: RetryPolicy;
  /** A part whose bytes stop moving for this long counts as a network error. */
  stallMs: number;
  /** Caps the bytes per second of all parts together. */
  limiter?: RateLimiter;
  signal: AbortSignal;
  events?: UploadEvents;
}

// Large enough for few syscalls, small enough that eight parts in flight keep RSS low (measured: bench/upload.js).
const READ_BUFFER = 512 * 1024;

class StallError extends Error {
  readonly code = 'STALLED';
}

export async function uploadParts(job: UploadJob): Promise<void> {
  const group = new AbortController();
  const onAbort = () => group.abort(job.signal.reason);
  job.signal.addEventListener('abort', onAbort, { once: true });
  const limit = pLimit(job.concurrency);
  try {
    await Promise.all(
      job.parts.map((part) =>
        limit(async () => {
          if (group.signal.aborted) return;
          try {
            await uploadPart(job, part, group.signal);
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
    job.signal.removeEventListener('abort', onAbort);
  }
}

async function uploadPart(job: UploadJob, part: Part, signal: AbortSignal): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    let sent = 0;
    try {
      await putOnce(job, part, signal, (n) => {
        sent += n;
        job.events?.progress?.(n);
      });
      job.events?.partDone?.(part);
      return;
    } catch (err) {
      if (sent) job.events?.progress?.(-sent);
      if (signal.aborted) throw signal.reason;
      const retryable =
        err instanceof NetworkError || (err instanceof ApiError && (err.status === 408 || err.status === 429 || err.status >= 500));
      if (!retryable || attempt >= job.retry.attempts) {
        const why = err instanceof ApiError ? `${err.message} (${err.code})` : (err as Error).message;
        throw new UploadError(
          `part ${part.number} of ${job.parts.length} failed${retryable ? ` after ${attempt} attempts` : ''}: ${why}`,
          undefined,
          { cause: err },
        );
      }
      const wait = backoffMs(job.retry, attempt, err instanceof ApiError ? err.retryAfterMs : undefined);
      job.events?.retry?.(part, attempt, err as Error, wait);
      await sleep(wait, signal);
    }
  }
}

async function putOnce(job: UploadJob, part: Part, signal: AbortSignal, moved: (n: number) => void): Promise<void> {
  const url = new URL(part.url);
  const attempt = new AbortController();
  const onAbort = () => attempt.abort(signal.reason);
  signal.addEventListener('abort', onAbort, { once: true });
  let last = Date.now();
  const watchdog = setInterval(() => {
    if (Date.now() - last > job.stallMs) attempt.abort(new StallError(`no bytes moved for ${Math.round(job.stallMs / 1000)} s`));
  }, Math.min(1000, job.stallMs));
  const source = fs.createReadStream(job.file, {
    start: part.offset,
    end: part.offset + part.length - 1,
    highWaterMark: READ_BUFFER,
  });
  // Only counts bytes on their way to undici: no reason to hold more than its default 16 KiB.
  const body = new PassThrough();
  body.on('data', (chunk: Buffer) => {
    last = Date.now();
    moved(chunk.length);
  });
  body.pause();
  if (job.limiter) pipeline(source, job.limiter.stream(attempt.signal), body, () => {});
  else pipeline(source, body, () => {});
  try {
    const headers: Record<string, string> = { 'content-length': String(part.length) };
    if (job.contentType) headers['content-type'] = job.contentType;
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, { method: 'PUT', body, headers, dispatcher: job.dispatcher, signal: attempt.signal });
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      throw toNetworkError(attempt.signal.reason instanceof StallError ? attempt.signal.reason : err, url);
    }
    last = Date.now();
    const text = await readText(res.body, 64 * 1024).catch((err) => {
      throw toNetworkError(err, url);
    });
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const error = new ApiError(res.statusCode, parseErrorBody(res.statusCode, text));
      error.retryAfterMs = parseRetryAfter(res.headers['retry-after'], Date.now());
      throw error;
    }
  } finally {
    clearInterval(watchdog);
    signal.removeEventListener('abort', onAbort);
    source.destroy();
  }
}
