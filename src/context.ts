// What every command receives: streams that know whether they are terminals, the environment, a clock,
// the parsed global options, and lazily built expensive things (the target and its API client).
import type { Readable, Writable } from 'node:stream';
import type { ApiClient } from './api/client.js';
import type { Target } from './config/target.js';
import type { RetryPolicy } from './api/retry.js';
import { DEFAULT_RETRY } from './api/retry.js';

export type Env = Record<string, string | undefined>;

export type OutStream = Writable & { isTTY?: boolean; columns?: number };
export type InStream = Readable & { isTTY?: boolean; setRawMode?: (mode: boolean) => unknown };

export interface IOStreams {
  stdin: InStream;
  stdout: OutStream;
  stderr: OutStream;
}

export interface GlobalOptions {
  endpoint?: string;
  token?: string;
  namespaceToken?: string;
  game?: string;
  namespace?: string;
  json: boolean;
  quiet: boolean;
  /** false when --no-color was given. */
  color: boolean;
  verbose: boolean;
  /** Allow a plain-http endpoint off this machine. */
  insecureHttp: boolean;
  /** API call timeout in ms. */
  timeoutMs: number;
  /** --profile <name>; false with --no-profile (saved profiles ignored). */
  profile?: string | false;
  /** false with --no-input: a command that would prompt fails instead. */
  input: boolean;
}

export interface Context {
  io: IOStreams;
  env: Env;
  cwd: string;
  now(): number;
  retry: RetryPolicy;
  /** Aborted on SIGINT/SIGTERM: long operations pass it to every request. */
  signal: AbortSignal;
  global: GlobalOptions;
  /** Resolves where commands talk to (flags, env, profile, or the embedded emulator); built once, on first use. */
  target(): Promise<Target>;
  api(): Promise<ApiClient>;
  /** Releases what target()/api() built: the HTTP agent and an embedded emulator. */
  close(): Promise<void>;
  /** Messages for people, on stderr. */
  info(line: string): void;
  warn(line: string): void;
  verbose(line: string): void;
}

export const DEFAULT_GLOBALS: GlobalOptions = {
  json: false,
  quiet: false,
  color: true,
  verbose: false,
  insecureHttp: false,
  timeoutMs: 30_000,
  input: true,
};

export interface ContextInit {
  io?: Partial<IOStreams>;
  env?: Env;
  cwd?: string;
  now?: () => number;
  retry?: RetryPolicy;
  signal?: AbortSignal;
}

export function createContext(init: ContextInit = {}, global: GlobalOptions = DEFAULT_GLOBALS): Context {
  const io: IOStreams = {
    stdin: init.io?.stdin ?? process.stdin,
    stdout: init.io?.stdout ?? process.stdout,
    stderr: init.io?.stderr ?? process.stderr,
  };
  let target: Promise<Target> | undefined;
  let api: Promise<ApiClient> | undefined;
  const ctx: Context = {
    io,
    env: init.env ?? process.env,
    cwd: init.cwd ?? process.cwd(),
    now: init.now ?? Date.now,
    retry: init.retry ?? DEFAULT_RETRY,
    signal: init.signal ?? new AbortController().signal,
    global,
    target() {
      target ??= import('./config/target.js').then((m) => m.resolveTarget(ctx));
      return target;
    },
    api() {
      api ??= Promise.all([ctx.target(), import('./api/client.js')]).then(
        ([t, m]) => new m.ApiClient(t, { ctx }),
      );
      return api;
    },
    async close() {
      const [a, t] = await Promise.allSettled([api, target]);
      if (a.status === 'fulfilled' && a.value) await a.value.close();
      if (t.status === 'fulfilled' && t.value) await t.value.close();
    },
    info(line) {
      if (!ctx.global.quiet) io.stderr.write(line + '\n');
    },
    warn(line) {
      io.stderr.write('warning: ' + line + '\n');
    },
    verbose(line) {
      if (ctx.global.verbose) io.stderr.write(line + '\n');
    },
  };
  return ctx;
}
