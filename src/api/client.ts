// The thin HTTP layer: the process's undici agents (agents.ts), bearer auth, JSON in and out, every non-2xx
// turned into an ApiError, and the retry rules of transport.ts. It prints nothing but the --verbose request log
// (which never shows a token) and, on a terminal, a line per retry.
import { STATUS_CODES } from 'node:http';
import type { Dispatcher } from 'undici';
import type { Agents } from './agents.js';
import type { BaseContext } from '../base-context.js';
import type { Target } from '../config/target.js';
import { ApiError, GAME_GONE, NetworkError, UsageError } from '../errors.js';
import { describeBody, readText, responseError, retryLine, send, toNetworkError, withRetries, type RetryNotice } from './transport.js';
import { version } from '../version.js';
import { READY_WAIT_MS } from '../globals.js';

/** `admin`: the emulator's admin routes, with GAMEHOST_EMULATOR_ADMIN_TOKEN when it is set (never from a profile). */
export type AuthKind = 'cloud' | 'namespace' | 'admin' | 'none';

export interface CallSpec {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  query?: Record<string, string>;
  body?: unknown;
  auth: AuthKind;
  /** When false the call is re-sent only after a 429 or when the request surely never left. */
  idempotent: boolean;
  /** Answers the caller handles itself rather than have them retried (see RetryRules). */
  handledByCaller?(err: unknown): boolean;
  /** At most this many attempts, the first included: 1 for a lookup the command can do without (no retry waits). */
  attempts?: number;
  /** The service may hold the answer this long on purpose (a watch): it is added to --timeout's wait for the headers. */
  holdMs?: number;
  /**
   * The service holds the answer until this lobby is ready (find, join; `the lobby found` for find): without
   * --timeout the wait for the headers is READY_WAIT_MS, and running out of it says the lobby did not become ready.
   */
  untilReady?: string;
  /** Ends this call early (as Ctrl-C ends every call): the call throws the signal's reason. */
  signal?: AbortSignal;
}

export const USER_AGENT = `gamehost/${version} node/${process.versions.node}`;

const MAX_ERROR_BODY = 64 * 1024;

export class ApiClient {
  private readonly ctx: BaseContext;
  private readonly agents: Agents;

  constructor(
    readonly target: Target,
    { ctx, agents }: { ctx: BaseContext; agents: Agents },
  ) {
    this.ctx = ctx;
    this.agents = agents;
  }

  /**
   * The connections for `url`, an API call's, a presigned GET's or a part PUT's: the process's, through a proxy
   * when the environment names one, never for the embedded emulator (it is on loopback).
   */
  dispatcher(url: URL): Dispatcher {
    return this.agents.for(url, this.target.embedded === true);
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

  /** Set by a command that shows retries its own way (the upload's progress display); else a line on a terminal. */
  onRetry?: (notice: RetryNotice, spec: CallSpec) => void;

  async call<T>(spec: CallSpec): Promise<T> {
    return (await this.callWithText<T>(spec)).value;
  }

  /** The parsed answer and the text it was parsed from, for printing the service's body losslessly. */
  async callWithText<T>(spec: CallSpec): Promise<{ value: T; text: string }> {
    // A cloud token alone: matchmaker calls go with a namespace token made from it (namespace-token.ts).
    if (spec.auth === 'namespace' && this.target.namespaceToken === undefined && this.target.cloudToken) {
      const { withNamespaceToken } = await import('./namespace-token.js');
      return withNamespaceToken(this, this.ctx, (token) => this.attempts<T>(spec, token));
    }
    return this.attempts<T>(spec);
  }

  /** One call with its retries; `namespaceToken` stands in for the target's. */
  private attempts<T>(spec: CallSpec, namespaceToken?: string): Promise<{ value: T; text: string }> {
    const ctx = this.ctx;
    return withRetries(
      {
        policy: spec.attempts === undefined ? ctx.retry : { ...ctx.retry, attempts: Math.min(spec.attempts, ctx.retry.attempts) },
        signal: spec.signal ? AbortSignal.any([ctx.signal, spec.signal]) : ctx.signal,
        idempotent: spec.idempotent,
        handledByCaller: spec.handledByCaller,
        onRetry: (notice) => {
          ctx.verbose(`retrying ${spec.method} ${spec.path} in ${notice.waitMs} ms (${notice.error.message})`);
          if (this.onRetry) return this.onRetry(notice, spec);
          // Seen on a terminal only: a pipe or a CI log gets the final error, not the attempts before it.
          if (ctx.io.stderr.isTTY === true && !ctx.global.quiet && !ctx.global.verbose) ctx.io.stderr.write(retryLine(notice) + '\n');
        },
      },
      () => this.once<T>(spec, namespaceToken),
    );
  }

  private headers(auth: AuthKind, hasBody: boolean, namespaceToken = this.target.namespaceToken): Record<string, string> {
    const headers: Record<string, string> = { 'user-agent': USER_AGENT, accept: 'application/json' };
    if (hasBody) headers['content-type'] = 'application/json';
    const token =
      auth === 'cloud'
        ? this.target.cloudToken
        : auth === 'namespace'
          ? namespaceToken
          : auth === 'admin'
            ? this.ctx.env.GAMEHOST_EMULATOR_ADMIN_TOKEN || undefined
            : undefined;
    if (auth === 'cloud' && !token) {
      throw new UsageError('no cloud token: pass --token, set GAMEHOST_TOKEN (or RIVET_TOKEN), or run `gamehost login`');
    }
    if (token) headers.authorization = `Bearer ${token}`;
    return headers;
  }

  private async once<T>(spec: CallSpec, namespaceToken?: string): Promise<{ value: T; text: string }> {
    const url = new URL(this.target.endpoint + spec.path);
    for (const [k, v] of Object.entries(spec.query ?? {})) url.searchParams.set(k, v);
    const payload = spec.body === undefined ? undefined : JSON.stringify(spec.body);
    const headers = this.headers(spec.auth, payload !== undefined, namespaceToken);
    const started = performance.now();
    this.ctx.verbose(`> ${spec.method} ${url.origin}${url.pathname}${url.search}`);
    const signal = spec.signal ? AbortSignal.any([this.ctx.signal, spec.signal]) : this.ctx.signal;
    const g = this.ctx.global;
    const headersTimeoutMs =
      spec.holdMs !== undefined ? g.timeoutMs + spec.holdMs : spec.untilReady !== undefined && !g.timeoutGiven ? READY_WAIT_MS : undefined;
    if (headersTimeoutMs !== undefined) this.ctx.verbose(`  (the answer awaited up to ${headersTimeoutMs / 1000} s)`);
    const res = await send(url, { method: spec.method, headers, body: payload, dispatcher: this.dispatcher(url), signal, headersTimeoutMs }).catch((err: unknown) => {
      // Held until the lobby is ready, and not answered in time: the lobby is what did not come, not the network.
      if (spec.untilReady === undefined || !(err instanceof NetworkError) || err.code !== 'HEADERS_TIMEOUT') throw err;
      const waited = (headersTimeoutMs ?? g.timeoutMs) / 1000;
      const notReady = new NetworkError(`${spec.untilReady} did not become ready: no answer in ${waited} s`, err.code, { cause: err, hostname: err.hostname });
      notReady.hint = `its server must call ready (POST /matchmaker/lobbies/ready) once it listens; --timeout waits longer`;
      throw notReady;
    });
    const status = res.statusCode;
    const rayId = header(res.headers, 'rvt-ray-id');
    const text = await readText(res.body, status >= 300 ? MAX_ERROR_BODY : Infinity).catch((err) => {
      if (signal.aborted) throw signal.reason;
      throw toNetworkError(err, url);
    });
    this.ctx.verbose(
      `< ${status} ${STATUS_CODES[status] ?? ''} in ${Math.round(performance.now() - started)} ms` +
        (rayId ? ` (ray ${rayId})` : ''),
    );
    if (status < 200 || status >= 300) {
      const err = responseError(status, res.headers, text, { rayId });
      // The admin routes take the emulator's admin token, which `gamehost login` never sets.
      if (spec.auth === 'admin' && err instanceof ApiError && err.status === 401) err.hint = 'set GAMEHOST_EMULATOR_ADMIN_TOKEN to the token the emulator was started with';
      // A service's token with no endpoint went to the embedded emulator: the missing endpoint is the cause, not the token.
      if (spec.auth === 'cloud' && this.target.cloudTokenFrom && err instanceof ApiError && err.status === 401 && !GAME_GONE.test(err.message)) {
        const cause = new ApiError(401, { code: err.code, message: `no endpoint is set, so the token of ${this.target.cloudTokenFrom} went to the embedded emulator, which does not know it` }, err.rayId);
        cause.hint = 'pass --endpoint (or set GAMEHOST_ENDPOINT) for the service the token is for';
        throw cause;
      }
      throw err;
    }
    if (text.trim() === '') return { value: {} as T, text: '{}' };
    try {
      return { value: JSON.parse(text) as T, text };
    } catch {
      throw new ApiError(status, {
        code: 'BAD_RESPONSE',
        message: `the service answered ${status} with a body that is not JSON (${describeBody(text)})`,
      }, rayId);
    }
  }
}

function header(headers: Dispatcher.ResponseData['headers'], name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
