// Requests to presigned URLs (the CSV download here, the part uploads in src/upload): no bearer token ever
// goes with them, and they go through the process's agents and transport.ts's retry rules.
import type { IncomingMessage } from 'node:http';
import type { Agents } from './agents.js';
import type { Context } from '../context.js';
import { checkServiceUrl, readText, responseError, send, withRetries } from './transport.js';
import { USER_AGENT } from './client.js';

/**
 * Opens a presigned GET, retrying until the answer's headers arrive; the caller streams the body (an async iterable
 * of Buffers that fails when it stays idle for --timeout). `field` names the link for the user when the service gave
 * something that is not a URL.
 */
export async function openPresignedGet(ctx: Context, agents: Agents, href: unknown, field = 'export url'): Promise<IncomingMessage> {
  const url = checkServiceUrl(field, href);
  return withRetries({ policy: ctx.retry, signal: ctx.signal, idempotent: true }, async () => {
    ctx.verbose(`> GET ${url.origin}${url.pathname} (presigned)`);
    const res = await send(url, { method: 'GET', headers: { 'user-agent': USER_AGENT }, agents, signal: ctx.signal, timeoutMs: ctx.global.timeoutMs });
    ctx.verbose(`< ${res.statusCode}`);
    if (res.statusCode === 200) return res;
    const text = await readText(res, 64 * 1024).catch(() => '');
    throw responseError(res.statusCode!, res.headers, text, { presigned: 'export' });
  });
}
