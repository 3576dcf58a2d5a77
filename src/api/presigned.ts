// Requests to presigned URLs (the CSV download here, the part uploads in src/upload): no bearer token ever
// goes with them, and they go through the process's one dispatcher.
import './wasm-flags.js'; // before undici
import { request, type Dispatcher } from 'undici';
import type { Context } from '../context.js';
import { ApiError, NetworkError } from '../errors.js';
import { USER_AGENT, parseErrorBody, readText, toNetworkError } from './client.js';
import { backoffMs, parseRetryAfter, sleep } from './retry.js';

/** Opens a presigned GET, retrying until the answer's headers arrive; the caller streams the body. */
export async function openPresignedGet(
  ctx: Context,
  dispatcher: Dispatcher,
  href: string,
): Promise<Dispatcher.ResponseData> {
  const url = new URL(href);
  for (let attempt = 1; ; attempt++) {
    try {
      ctx.verbose(`> GET ${url.origin}${url.pathname} (presigned)`);
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, { method: 'GET', headers: { 'user-agent': USER_AGENT }, dispatcher, signal: ctx.signal });
      } catch (err) {
        throw toNetworkError(err, url);
      }
      ctx.verbose(`< ${res.statusCode}`);
      if (res.statusCode === 200) return res;
      const text = await readText(res.body, 64 * 1024).catch(() => '');
      const error = new ApiError(res.statusCode, parseErrorBody(res.statusCode, text));
      error.retryAfterMs = parseRetryAfter(res.headers['retry-after'], Date.now());
      throw error;
    } catch (err) {
      if (ctx.signal.aborted) throw ctx.signal.reason;
      const retryable =
        err instanceof NetworkError ||
        (err instanceof ApiError && (err.status === 408 || err.status === 429 || err.status >= 500));
      if (!retryable || attempt >= ctx.retry.attempts) throw err;
      await sleep(backoffMs(ctx.retry, attempt, err instanceof ApiError ? err.retryAfterMs : undefined), ctx.signal);
    }
  }
}
