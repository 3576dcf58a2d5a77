// Requests to presigned URLs (the CSV download here, the part uploads in src/upload): no bearer token ever
// goes with them, and they go through the process's one dispatcher and transport.ts's retry rules.
import type { Dispatcher } from 'undici';
import type { Context } from '../context.js';
import { checkServiceUrl, readText, responseError, send, withRetries } from './transport.js';
import { USER_AGENT } from './client.js';

/**
 * Opens a presigned GET, retrying until the answer's headers arrive; the caller streams the body. `field` names
 * the link for the user when the service gave something that is not a URL.
 */
export async function openPresignedGet(ctx: Context, dispatcher: Dispatcher, href: unknown, field = 'export url'): Promise<Dispatcher.ResponseData> {
  const url = checkServiceUrl(field, href);
  return withRetries({ policy: ctx.retry, signal: ctx.signal, idempotent: true }, async () => {
    ctx.verbose(`> GET ${url.origin}${url.pathname} (presigned)`);
    const res = await send(url, { method: 'GET', headers: { 'user-agent': USER_AGENT }, dispatcher, signal: ctx.signal });
    ctx.verbose(`< ${res.statusCode}`);
    if (res.statusCode === 200) return res;
    const text = await readText(res.body, 64 * 1024).catch(() => '');
    throw responseError(res.statusCode, res.headers, text, { presigned: 'export' });
  });
}
