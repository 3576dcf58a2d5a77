// The one transport-and-retry layer under every request: API calls (client.ts), presigned GETs (presigned.ts)
// and presigned part PUTs (src/upload/send.ts). The same rules for all of them: which failures are worth another
// attempt, how long to wait, how an answer or a failure becomes one readable error, and that a URL the service
// gave us is checked before it is used.
import './wasm-flags.js'; // before undici
import { STATUS_CODES } from 'node:http';
import { request, type Dispatcher } from 'undici';
import { ApiError, NetworkError, ResponseError, type ApiErrorBody } from '../errors.js';
import { backoffMs, errorCode, findCause, parseRetryAfter, sleep, wasNotSent, type RetryPolicy } from './retry.js';

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
  onRetry?(notice: RetryNotice): void;
}

/** A certificate the client does not trust stays untrusted: TLS failures are never retried. */
export function isTlsFailure(err: NetworkError): boolean {
  return /CERT|SSL|TLS/i.test(err.code);
}

/** Whether `err` is worth another attempt: network errors (not TLS), 408, 429, 5xx; a 429 even when not idempotent. */
export function isRetryable(err: unknown, idempotent: boolean): boolean {
  if (err instanceof ApiError) return err.status === 429 || (idempotent && (err.status === 408 || err.status >= 500));
  if (err instanceof NetworkError) {
    if (isTlsFailure(err)) return false;
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
      if (n >= policy.attempts || !isRetryable(err, rules.idempotent)) throw err;
      const waitMs = backoffMs(policy, n, err instanceof ApiError ? err.retryAfterMs : undefined);
      rules.onRetry?.({ attempt: n + 1, attempts: policy.attempts, waitMs, error: err as Error });
      await sleep(waitMs, signal);
    }
  }
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

/** Sends one request through undici; a failure to get an answer becomes a NetworkError naming the host. */
export async function send(
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: string; dispatcher: Dispatcher; signal: AbortSignal },
): Promise<Dispatcher.ResponseData> {
  try {
    return await request(url, { method: init.method as Dispatcher.HttpMethod, headers: init.headers, body: init.body, dispatcher: init.dispatcher, signal: init.signal });
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
export type PresignedUse = 'export' | 'part';

const PRESIGNED_403_HINT: Record<PresignedUse, string> = {
  export: 'the download link was refused (it may have expired): run `gamehost history export` again for a new one',
  part: 'this upload cannot be resumed: run the same command again to start a new one',
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
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_BODY_TIMEOUT: 'the answer stalled',
  UND_ERR_SOCKET: 'the connection closed unexpectedly',
};

/** 127.0.0.0/8, localhost and ::1: where `gamehost emulator serve` listens. */
export function isLoopback(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}

export function toNetworkError(err: unknown, url: URL): NetworkError {
  if (err instanceof NetworkError) return err;
  const tlsError = findCause(err, (code) => /CERT|SSL|TLS/i.test(code));
  const code = errorCode(err) ?? tlsError?.code ?? 'ENETWORK';
  if (code === 'STALLED') return new NetworkError(`the connection to ${url.host} stalled: ${(err as Error).message}`, code, { cause: err });
  const tls = /CERT|SSL|TLS/i.test(code);
  const tlsMessage = (tlsError?.error as Error | undefined)?.message;
  const words = NETWORK_WORDS[code] ?? (tls ? `TLS failure${tlsMessage ? `: ${tlsMessage}` : ''}` : (err as Error)?.message || 'network error');
  const error = new NetworkError(`could not reach ${url.host}: ${words} (${code})`, code, { cause: err });
  if (tls) error.hint = 'for a private CA, point NODE_EXTRA_CA_CERTS at its bundle';
  else if (code === 'ECONNREFUSED' && isLoopback(url.hostname)) error.hint = 'nothing listens there: start the emulator with `gamehost emulator serve`';
  return error;
}

/**
 * The proxy for `url` from HTTPS_PROXY / HTTP_PROXY (or lower case; https falls back to HTTP_PROXY) unless NO_PROXY
 * names its host: the same choice undici's EnvHttpProxyAgent makes for API calls, for the part uploads that go
 * through node:http.
 */
export function proxyFor(env: Record<string, string | undefined>, url: URL): URL | undefined {
  const http = env.HTTP_PROXY ?? env.http_proxy;
  const raw = url.protocol === 'https:' ? (env.HTTPS_PROXY ?? env.https_proxy ?? http) : http;
  if (!raw) return undefined;
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  const port = url.port || (url.protocol === 'https:' ? '443' : '80');
  for (const entry of (env.NO_PROXY ?? env.no_proxy ?? '').split(/[\s,]+/).filter(Boolean)) {
    if (entry === '*') return undefined;
    const m = /^(?:\*?\.)?(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(entry.toLowerCase());
    if (!m || (m[2] && m[2] !== port)) continue;
    const name = m[1]!.replace(/^\[|\]$/g, '');
    if (host === name || host.endsWith(`.${name}`)) return undefined;
  }
  try {
    return new URL(raw.includes('://') ? raw : `http://${raw}`);
  } catch {
    return undefined;
  }
}
