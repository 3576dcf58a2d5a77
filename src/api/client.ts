// The thin HTTP layer: one keep-alive dispatcher for the process, bearer auth, JSON in and out, every non-2xx
// turned into an ApiError, and the retry policy for calls that are safe to repeat. It never prints, except
// the --verbose request log (which never shows a token).
import './wasm-flags.js';
import { STATUS_CODES } from 'node:http';
import { Agent, EnvHttpProxyAgent, request, type Dispatcher } from 'undici';
import type { Context } from '../context.js';
import type { Target } from '../config/target.js';
import { ApiError, NetworkError, UsageError, type ApiErrorBody } from '../errors.js';
import { backoffMs, errorCode, findCause, parseRetryAfter, sleep, wasNotSent } from './retry.js';
import { version } from '../version.js';

export type AuthKind = 'cloud' | 'namespace' | 'none';

export interface CallSpec {
  method: 'GET' | 'POST';
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  auth: AuthKind;
  /** When false the call is re-sent only after a 429 or when the request surely never left. */
  idempotent: boolean;
}

export const USER_AGENT = `gamehost/${version} node/${process.versions.node}`;

const MAX_ERROR_BODY = 64 * 1024;

export function createDispatcher(ctx: Context, embedded: boolean): Dispatcher {
  const timeouts = {
    headersTimeout: ctx.global.timeoutMs,
    bodyTimeout: ctx.global.timeoutMs,
    connect: { timeout: ctx.global.timeoutMs },
    keepAliveTimeout: 30_000,
  };
  // The embedded emulator is on loopback: never send it through a proxy.
  if (embedded) return new Agent(timeouts);
  const env = ctx.env;
  const httpProxy = env.HTTP_PROXY ?? env.http_proxy;
  const httpsProxy = env.HTTPS_PROXY ?? env.https_proxy;
  if (!httpProxy && !httpsProxy) return new Agent(timeouts);
  return new EnvHttpProxyAgent({ ...timeouts, httpProxy, httpsProxy, noProxy: env.NO_PROXY ?? env.no_proxy });
}

export class ApiClient {
  readonly dispatcher: Dispatcher;
  private readonly ctx: Context;

  constructor(
    readonly target: Target,
    { ctx }: { ctx: Context },
  ) {
    this.ctx = ctx;
    this.dispatcher = createDispatcher(ctx, target.embedded);
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }

  /** The game id from flags, environment or the embedded emulator; a clear usage error when none is known. */
  gameId(): string {
    if (!this.target.gameId) throw new UsageError('no game id: pass --game <id>, set GAMEHOST_GAME, or save it with `gamehost login --game <id>`');
    return this.target.gameId;
  }

  namespaceId(): string {
    if (!this.target.namespaceId) {
      throw new UsageError('no namespace id: pass --namespace <id>, set GAMEHOST_NAMESPACE, or save it with `gamehost login --namespace <id>`');
    }
    return this.target.namespaceId;
  }

  async call<T>(spec: CallSpec): Promise<T> {
    return (await this.callWithText<T>(spec)).value;
  }

  /** The parsed answer and the text it was parsed from, for printing the service's body losslessly. */
  async callWithText<T>(spec: CallSpec): Promise<{ value: T; text: string }> {
    const policy = this.ctx.retry;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.once<T>(spec);
      } catch (err) {
        if (this.ctx.signal.aborted || attempt >= policy.attempts) throw err;
        let retryAfter: number | undefined;
        if (err instanceof ApiError) {
          // A 429 means the service did not act: safe to repeat whatever the call.
          const retryable = err.status === 429 || (spec.idempotent && (err.status === 408 || err.status >= 500));
          if (!retryable) throw err;
          retryAfter = err.retryAfterMs;
        } else if (err instanceof NetworkError) {
          // A certificate the client does not trust stays untrusted: no retry.
          if (/CERT|SSL|TLS/i.test(err.code)) throw err;
          if (!spec.idempotent && !wasNotSent(err)) throw err;
        } else {
          throw err;
        }
        const wait = backoffMs(policy, attempt, retryAfter);
        this.ctx.verbose(`retrying ${spec.method} ${spec.path} in ${wait} ms (${(err as Error).message})`);
        await sleep(wait, this.ctx.signal);
      }
    }
  }

  private headers(auth: AuthKind, hasBody: boolean): Record<string, string> {
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: 'application/json' };
    if (hasBody) headers['content-type'] = 'application/json';
    const token =
      auth === 'cloud' ? this.target.cloudToken : auth === 'namespace' ? this.target.namespaceToken : undefined;
    if (auth === 'cloud' && !token) {
      throw new UsageError('no cloud token: pass --token, set GAMEHOST_TOKEN (or RIVET_TOKEN), or run `gamehost login`');
    }
    if (token) headers.authorization = `Bearer ${token}`;
    return headers;
  }

  private async once<T>(spec: CallSpec): Promise<{ value: T; text: string }> {
    const url = new URL(this.target.endpoint + spec.path);
    for (const [k, v] of Object.entries(spec.query ?? {})) url.searchParams.set(k, v);
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers = this.headers(spec.auth, payload !== undefined);
    const started = performance.now();
    this.ctx.verbose(`> ${spec.method} ${url.origin}${url.pathname}${url.search}`);
    let res: Dispatcher.ResponseData;
    try {
      res = await request(url, {
        method: spec.method,
        headers,
        body: payload,
        dispatcher: this.dispatcher,
        signal: this.ctx.signal,
      });
    } catch (err) {
      if (this.ctx.signal.aborted) throw this.ctx.signal.reason;
      throw toNetworkError(err, url);
    }
    const rayId = header(res.headers, 'rvt-ray-id');
    const text = await readText(res.body, res.statusCode >= 300 ? MAX_ERROR_BODY : Infinity).catch((err) => {
      if (this.ctx.signal.aborted) throw this.ctx.signal.reason;
      throw toNetworkError(err, url);
    });
    this.ctx.verbose(
      `< ${res.statusCode} ${STATUS_CODES[res.statusCode] ?? ''} in ${Math.round(performance.now() - started)} ms` +
        (rayId ? ` (ray ${rayId})` : ''),
    );
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const error = new ApiError(res.statusCode, parseErrorBody(res.statusCode, text), rayId);
      error.retryAfterMs = parseRetryAfter(res.headers['retry-after'], Date.now());
      throw error;
    }
    if (text.trim() === '') return { value: {} as T, text: '{}' };
    try {
      return { value: JSON.parse(text) as T, text };
    } catch {
      throw new ApiError(res.statusCode, {
        code: 'BAD_RESPONSE',
        message: `the service answered ${res.statusCode} with a body that is not JSON (${describeBody(text)})`,
      }, rayId);
    }
  }
}

function header(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
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

/** Understands the service's error body; anything else (an HTML 502 page, cut-off JSON) still gets one clear line. */
export function parseErrorBody(status: number, text: string): ApiErrorBody {
  try {
    const parsed = JSON.parse(text) as Partial<ApiErrorBody>;
    if (parsed && typeof parsed.code === 'string' && typeof parsed.message === 'string') return parsed as ApiErrorBody;
  } catch {
    // not JSON: described below
  }
  const reason = STATUS_CODES[status] ?? 'error';
  return {
    code: `HTTP_${status}`,
    message: `the service answered ${status} ${reason}` + (text.trim() ? ` (${describeBody(text)})` : ' with no body'),
  };
}

function describeBody(text: string): string {
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
  ETIMEDOUT: 'timed out',
  UND_ERR_CONNECT_TIMEOUT: 'connect timed out',
  UND_ERR_HEADERS_TIMEOUT: 'no answer in time',
  UND_ERR_BODY_TIMEOUT: 'the answer stalled',
  UND_ERR_SOCKET: 'the connection closed unexpectedly',
};

export function toNetworkError(err: unknown, url: URL): NetworkError {
  if (err instanceof NetworkError) return err;
  const tlsError = tlsFailure(err);
  const code = errorCode(err) ?? tlsError?.code ?? 'ENETWORK';
  if (code === 'STALLED') return new NetworkError(`the connection to ${url.host} stalled: ${(err as Error).message}`, code, { cause: err });
  const tls = /CERT|SSL|TLS/i.test(code);
  const words = NETWORK_WORDS[code] ?? (tls ? `TLS failure${tlsError?.message ? `: ${tlsError.message}` : ''}` : (err as Error)?.message || 'network error');
  const hint = tls ? 'for a private CA, point NODE_EXTRA_CA_CERTS at its bundle' : undefined;
  const error = new NetworkError(`could not reach ${url.host}: ${words} (${code})`, code, { cause: err });
  if (hint) error.hint = hint;
  return error;
}

/** TLS failures carry codes such as DEPTH_ZERO_SELF_SIGNED_CERT or ERR_SSL_WRONG_VERSION_NUMBER, anywhere in the cause chain. */
function tlsFailure(err: unknown): { code: string; message: string } | undefined {
  const found = findCause(err, (code) => /CERT|SSL|TLS/i.test(code));
  return found && { code: found.code, message: (found.error as Error).message ?? '' };
}
