// What the layers below the commands receive of a command's context (src/context.ts builds it and adds the lazy
// target, client and emulator): streams that know whether they are terminals, the environment, a clock, the parsed
// global options, and the way messages reach people. Types only, importing only leaves, so that naming it loads
// nothing and makes no circle through the context, which imports those layers.
import type { GlobalOptions } from './globals.js';
import type { Env, IOStreams } from './shared/io.js';
import type { RetryPolicy } from './shared/retry.js';

export interface BaseContext {
  io: IOStreams;
  env: Env;
  cwd: string;
  now(): number;
  retry: RetryPolicy;
  /** Aborted on SIGINT/SIGTERM: long operations pass it to every request. */
  signal: AbortSignal;
  global: GlobalOptions;
  /**
   * The command changes what the service holds (build push, lobby create, find, join, stop): in CI its target is
   * never an embedded emulator nobody asked for (src/config/target.ts).
   */
  writes: boolean;
  /**
   * How info() and warn() write on stderr: lines for people, or one JSON object a line where the command has
   * promised that every stderr line is JSON (`build push --progress json`).
   */
  notices: 'text' | 'json';
  /** Messages for people, on stderr. */
  info(line: string): void;
  warn(line: string): void;
  verbose(line: string): void;
}
