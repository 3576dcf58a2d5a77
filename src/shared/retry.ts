// The retry policy shared by API calls and upload parts: exponential backoff with full jitter, honouring
// Retry-After in both of its forms.

export interface RetryPolicy {
  /** Total attempts, the first included. */
  attempts: number;
  baseMs: number;
  maxMs: number;
  random?: () => number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 6, baseMs: 500, maxMs: 20_000 };

/** Wait before attempt `attempt + 1` (attempt counts from 1). Retry-After, when given, is a floor. */
export function backoffMs(policy: RetryPolicy, attempt: number, retryAfterMs?: number): number {
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** (attempt - 1));
  const jittered = Math.floor((policy.random ?? Math.random)() * ceiling);
  return retryAfterMs !== undefined ? Math.max(retryAfterMs, jittered) : jittered;
}

/** Retry-After is either delta-seconds or an HTTP-date; returns ms from `now`, or undefined if unusable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (!v) return undefined;
  const trimmed = v.trim();
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const at = Date.parse(trimmed);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - now);
}

/** Resolves after `ms`, or rejects with the signal's reason when aborted first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal!.reason);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Error codes that mean the request never reached the server, so even a non-idempotent call may be re-sent. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'CONNECT_TIMEOUT', 'EPROXY']);

/** The first error on `err`'s cause chain whose code passes `match`, with that code. */
export function findCause(err: unknown, match: (code: string) => boolean): { code: string; error: unknown } | undefined {
  let e: unknown = err;
  for (let depth = 0; e && depth < 4; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && match(code)) return { code, error: e };
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

// undici's names for the three timeouts of a request: ours are shorter, and the same whatever sent the request.
const UNDICI_CODES: Record<string, string> = {
  UND_ERR_CONNECT_TIMEOUT: 'CONNECT_TIMEOUT',
  UND_ERR_HEADERS_TIMEOUT: 'HEADERS_TIMEOUT',
  UND_ERR_BODY_TIMEOUT: 'BODY_TIMEOUT',
};

/**
 * The system error code of a failed request (ECONNRESET, ENOTFOUND, …), ours (HEADERS_TIMEOUT, STALLED, EPROXY, …),
 * or undici's UND_ERR_SOCKET (the other side closed the connection).
 */
export function errorCode(err: unknown): string | undefined {
  const code = findCause(err, (c) => /^(E[A-Z0-9_]+|(CONNECT|HEADERS|BODY)_TIMEOUT|STALLED|UND_ERR_(SOCKET|(CONNECT|HEADERS|BODY)_TIMEOUT))$/.test(c))?.code;
  return code && (UNDICI_CODES[code] ?? code);
}

export function wasNotSent(err: unknown): boolean {
  const code = errorCode(err);
  return code !== undefined && NOT_SENT_CODES.has(code);
}
