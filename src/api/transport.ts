// The one transport-and-retry layer under every request: API calls (client.ts), presigned GETs (presigned.ts)
// and presigned part PUTs (src/upload/engine.ts), all through undici and the process's agents (agents.ts). The
// same rules for all of them: which failures are worth another attempt, how long to wait, how an answer or a
// failure becomes one readable error, and that a URL the service gave us is checked before it is used.
import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import { request } from './agents.js';
import { ApiError, NetworkError, ResponseError, type ApiErrorBody } from '../errors.js';
import { isLoopbackHost } from '../config/endpoint.js';
import { formatDuration } from '../output/format.js';
import { backoffMs, errorCode, findCause, parseRetryAfter, sleep, wasNotSent, type RetryPolicy } from '../shared/retry.js';

/** One failed attempt that will be tried again. */
export interface RetryNotice {
  /** The attempt that comes next (2 for the first retry). */
  attempt: number;
  attempts: number;
  waitMs: number;
  error: Error;
}

export interface RetryRules {
  policy: RetryPolicy;
  signal: AbortSignal;
  /** When false the request is re-sent only after a 429 or when it surely never left. */
  idempotent: boolean;
  /** Answers the caller acts on itself (another completion in progress: it waits its own way), never retried here. */
  handledByCaller?(err: unknown): boolean;
  onRetry?(notice: RetryNotice): void;
}

/** A certificate the client does not trust stays untrusted: TLS failures are never retried. */
export function isTlsFailure(err: NetworkError): boolean {
  return /CERT|SSL|TLS/i.test(err.code);
}

/**
 * Failures that another attempt cannot mend, so they are said at once: a name that does not resolve, and a refused
 * connection on this machine (nothing listens there). A remote refusal is retried: a restarting load balancer
 * refuses for a moment.
 */
export function isFinalNetworkFailure(err: NetworkError): boolean {
  if (err.code === 'ENOTFOUND') return true;
  return err.code === 'ECONNREFUSED' && err.hostname !== undefined && isLoopbackHost(err.hostname);
}

/** Whether `err` is worth another attempt: network errors (not TLS), 408, 429, 5xx; a 429 even when not idempotent. */
export function isRetryable(err: unknown, idempotent: boolean): boolean {
  if (err instanceof ApiError) return err.status === 429 || (idempotent && (err.status === 408 || err.status >= 500));
  if (err instanceof NetworkError) {
    // A certificate, the proxy's credentials, a refusal on this machine or an unknown name do not get better by asking again.
    if (isTlsFailure(err) || err.code === 'EPROXYAUTH' || isFinalNetworkFailure(err)) return false;
    return idempotent || wasNotSent(err);
  }
  return false;
}

/** Runs `attempt` until it succeeds, a failure is not retryable, the attempts run out, or the signal aborts. */
export async function withRetries<T>(rules: RetryRules, attempt: (n: number) => Promise<T>): Promise<T> {
  const { policy, signal } = rules;
  for (let n = 1; ; n++) {
    try {
      return await attempt(n);
    } catch (err) {
      if (signal.aborted) throw signal.reason;
      if (n >= policy.attempts || !isRetryable(err, rules.idempotent) || rules.handledByCaller?.(err)) throw err;
      const waitMs = backoffMs(policy, n, err instanceof ApiError ? err.retryAfterMs : undefined);
      rules.onRetry?.({ attempt: n + 1, attempts: policy.attempts, waitMs, error: err as Error });
      await sleep(waitMs, signal);
    }
  }
}

/** `retrying in 1.2 s (2/6): connection refused`, the line a person sees for a retried API call. */
export function retryLine(notice: RetryNotice): string {
  return `retrying in ${formatDuration(notice.waitMs)} (${notice.attempt}/${notice.attempts}): ${failureWords(notice.error)}`;
}

/** Why an attempt failed, in a few words: `connection refused`, `HTTP 503 SERVICE_UNAVAILABLE`. */
export function failureWords(err: Error): string {
  if (err instanceof ApiError) return `HTTP ${err.status} ${err.code}`;
  if (err instanceof NetworkError) return NETWORK_WORDS[err.code] ?? err.message;
  return err.message;
}

/**
 * A URL that came from the service, checked before use: absolute http(s) only. `field` names it for the user
 * (`export url`); `fail` makes the error (exit 1 by default; the upload plan fails with exit 7).
 */
export function checkServiceUrl(field: string, value: unknown, fail: (message: string) => Error = (m) => new ResponseError(m)): URL {
  let url: URL | undefined;
  if (typeof value === 'string') {
    try {
      url = new URL(value);
    } catch {
      url = undefined;
    }
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
    const shown = typeof value === 'string' ? JSON.stringify(value.length > 120 ? value.slice(0, 120) + '…' : value) : String(value);
    throw fail(`the service's ${field} is not an absolute http(s) URL: ${shown}`);
  }
  return url;
}

export interface SendInit {
  method: Dispatcher.HttpMethod;
  headers: Record<string, string>;
  /** A string, or the bytes of a part (with its exact content-length among the headers). */
  body?: string | AsyncIterable<Buffer>;
  /** From the process's Agents (agents.ts): its timeouts are --timeout's. */
  dispatcher: Dispatcher;
  signal: AbortSignal;
  /** Longer than the dispatcher's wait for the headers, for an answer the service holds on purpose (a watch). */
  headersTimeoutMs?: number;
}

/**
 * Sends one request; resolves with the answer once its headers are in, and its body streams (an async iterable of
 * Buffers that fails when it stays idle for --timeout while it is being read). A failure to get an answer becomes a
 * NetworkError naming the host; an aborted signal throws its reason.
 */
export async function send(url: URL, init: SendInit): Promise<Dispatcher.ResponseData> {
  if (init.signal.aborted) throw init.signal.reason;
  try {
    const { method, headers, body, signal, headersTimeoutMs } = init;
    // undici takes any async iterable as a body; its types name only streams.
    const options: Dispatcher.RequestOptions = { origin: url.origin, path: url.pathname + url.search, method, headers, body: body as unknown as Dispatcher.DispatchOptions['body'], signal };
    if (headersTimeoutMs !== undefined) options.headersTimeout = headersTimeoutMs;
    return await request(init.dispatcher, options);
  } catch (err) {
    if (init.signal.aborted) throw init.signal.reason;
    throw toNetworkError(err, url);
  }
}

/** Reads a body as text, keeping at most `limit` bytes (the rest is drained). */
export async function readText(body: AsyncIterable<Buffer>, limit = Infinity): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < limit) chunks.push(chunk);
    size += chunk.length;
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Where a presigned URL leads: no token goes with it, so a 403 there is never the token's fault. */
export type PresignedUse = 'export' | 'log-export' | 'part';

// A part's hint is the upload session's to give: it knows whether the upload can go on and what holds its tag.
const PRESIGNED_403_HINT: Partial<Record<PresignedUse, string>> = {
  export: 'the download link was refused (it may have expired): run `gamehost history export` again for a new one',
  'log-export': 'the download link was refused (it may have expired): run `gamehost lobby logs --export` again for a new one',
};

/** A non-2xx answer as an ApiError: the service's JSON error, S3's XML error, or one line about anything else. */
export function responseError(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  text: string,
  options: { rayId?: string; presigned?: PresignedUse } = {},
): ApiError {
  const body = parseErrorBody(status, text);
  // Presigned answers come from the object store: say the status, code and message as one line.
  if (options.presigned && !body.message.startsWith('the service answered')) body.message = `${status} ${body.code}: ${body.message}`;
  const error = new ApiError(status, body, options.rayId);
  error.retryAfterMs = parseRetryAfter(headers['retry-after'], Date.now());
  if (options.presigned) error.hint = status === 403 ? PRESIGNED_403_HINT[options.presigned] : undefined;
  return error;
}

/** Understands the service's error body and S3's XML error; anything else (an HTML 502 page, cut-off JSON) still gets one clear line. */
export function parseErrorBody(status: number, text: string): ApiErrorBody {
  try {
    const parsed = JSON.parse(text) as Partial<ApiErrorBody>;
    if (parsed && typeof parsed.code === 'string' && typeof parsed.message === 'string') return parsed as ApiErrorBody;
  } catch {
    // not JSON: described below
  }
  const s3 = s3Error(text);
  if (s3) return s3;
  const reason = STATUS_CODES[status] ?? 'error';
  return {
    code: `HTTP_${status}`,
    message: `the service answered ${status} ${reason}` + (text.trim() ? ` (${describeBody(text)})` : ' with no body'),
  };
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

/** `<Error><Code>AccessDenied</Code><Message>Request has expired</Message>…</Error>`, as S3 and its kin answer. */
function s3Error(text: string): ApiErrorBody | undefined {
  if (!/^\s*(<\?xml[^>]*>\s*)?<Error>/.test(text)) return undefined;
  const field = (name: string) =>
    new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1]?.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => XML_ENTITIES[e]!).trim();
  const code = field('Code');
  if (!code) return undefined;
  const requestId = field('RequestId');
  return { code, message: field('Message') || code, ...(requestId ? { ray_id: requestId } : {}) };
}

export function describeBody(text: string): string {
  const t = text.trim();
  if (/^<(!doctype|html)/i.test(t)) {
    const title = /<title>([^<]*)<\/title>/i.exec(t)?.[1]?.trim();
    return title ? `an HTML page: "${title.slice(0, 80)}"` : 'an HTML page';
  }
  if (/^[{[]/.test(t)) return 'malformed JSON';
  return `"${t.slice(0, 80).replace(/\s+/g, ' ')}${t.length > 80 ? '…' : ''}"`;
}

const NETWORK_WORDS: Record<string, string> = {
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'DNS lookup failed',
  ECONNRESET: 'connection reset',
  EPIPE: 'connection closed while sending',
  ETIMEDOUT: 'timed out',
  UND_ERR_SOCKET: 'the connection closed',
  CONNECT_TIMEOUT: 'connect timed out',
  HEADERS_TIMEOUT: 'no answer in time',
  BODY_TIMEOUT: 'the answer stalled',
};

export function toNetworkError(err: unknown, url: URL): NetworkError {
  if (err instanceof NetworkError) return err;
  const tlsError = findCause(err, (code) => /CERT|SSL|TLS/i.test(code));
  const code = errorCode(err) ?? tlsError?.code ?? 'ENETWORK';
  if (code === 'STALLED') return new NetworkError(`the connection to ${url.host} stalled: ${(err as Error).message}`, code, { cause: err });
  const isTls = /CERT|SSL|TLS/i.test(code);
  // Node.js 24 appends its own advice to the message; the hint below is ours, on every Node.js.
  const tlsMessage = (tlsError?.error as Error | undefined)?.message?.replace(/; if the root CA is installed locally, try running Node\.js with --use-system-ca$/, '');
  // The proxy's refusal says what it answered in its own words.
  const own = code.startsWith('EPROXY') ? (findCause(err, (c) => c === code)?.error as Error).message : undefined;
  // The server closed the connection before answering.
  const hangUp = code === 'ECONNRESET' && (err as Error)?.message === 'socket hang up';
  const words =
    own ??
    (hangUp
      ? 'the connection closed before an answer'
      : (NETWORK_WORDS[code] ?? (isTls ? `TLS failure${tlsMessage ? `: ${tlsMessage}` : ''}` : (err as Error)?.message || 'network error')));
  const error = new NetworkError(`could not reach ${url.host}: ${words} (${code})`, code, { cause: err, hostname: url.hostname });
  if (isTls) error.hint = 'for a private CA, point NODE_EXTRA_CA_CERTS at its bundle';
  else if (code === 'ECONNREFUSED' && isLoopbackHost(url.hostname)) error.hint = 'nothing listens there: start the emulator with `gamehost emulator serve`';
  else if (code === 'ENOTFOUND') error.hint = `no address is known for ${url.hostname}: check the endpoint (--endpoint, GAMEHOST_ENDPOINT or the profile)`;
  return error;
}
