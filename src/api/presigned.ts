// Requests to presigned URLs (the CSV download here, the part uploads in src/upload): no bearer token ever
// goes with them, and they go through the process's agents and transport.ts's retry rules.
import type { Dispatcher } from 'undici';
import type { ApiClient } from './client.js';
import type { BaseContext } from '../base-context.js';
import { readText, responseError, send, withRetries, type PresignedUse } from './transport.js';
import { USER_AGENT } from './client.js';

/**
 * Opens a presigned GET, retrying until the answer's headers arrive; the caller streams the body (an async iterable
 * of Buffers that fails when it stays idle for --timeout). `url` is one the service gave, already checked
 * (transport.ts checkServiceUrl).
 */
export async function openPresignedGet(ctx: BaseContext, api: ApiClient, url: URL, use: PresignedUse = 'export'): Promise<Dispatcher.ResponseData> {
  return withRetries({ policy: ctx.retry, signal: ctx.signal, idempotent: true }, async () => {
    ctx.verbose(`> GET ${url.origin}${url.pathname} (presigned)`);
    const res = await send(url, { method: 'GET', headers: { 'user-agent': USER_AGENT }, dispatcher: api.dispatcher(url), signal: ctx.signal });
    ctx.verbose(`< ${res.statusCode}`);
    if (res.statusCode === 200) return res;
    const text = await readText(res.body, 64 * 1024).catch(() => '');
    throw responseError(res.statusCode, res.headers, text, { presigned: use });
  });
}
