// One error hierarchy for the whole CLI. Each class knows its exit code, so cli.ts maps errors in one place.
// The emulator's failures carry codes of their own (it knows nothing of exit codes): EmulatorFailedError says what
// each means here.
import type { EmulatorFailure, FailureCode } from './emulator/errors.js';

export const ExitCode = {
  OK: 0,
  UNEXPECTED: 1,
  USAGE: 2,
  AUTH: 3,
  NOT_FOUND: 4,
  UNAVAILABLE: 5,
  NETWORK: 6,
  UPLOAD: 7,
  SIGINT: 130,
  /**
   * stdout was closed before the result was written (`… | head -c1`): 128 + SIGPIPE, what a shell reports for a
   * tool SIGPIPE ended, so `set -o pipefail` scripts see the same code from us as from them. Nothing is printed.
   */
  OUTPUT_CLOSED: 141,
  SIGTERM: 143,
} as const;

export abstract class CliError extends Error {
  abstract readonly exitCode: number;
  /** A second line telling the user what to do, shown after the message. */
  hint?: string;
  /** Already reported in the command's own form (a JSON event under --progress json): print nothing more. */
  reported?: boolean;
}

/** Bad input, found before any request was sent. */
export class UsageError extends CliError {
  readonly exitCode = ExitCode.USAGE;
  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'UsageError';
    this.hint = hint;
  }
}

export interface ApiErrorBody {
  code: string;
  message: string;
  ray_id?: string;
  documentation?: string;
  metadata?: unknown;
}

/** The emulator's 401 for a token of a game that was deleted or expired (the token itself is sound). */
export const GAME_GONE = /game of this token was deleted or has expired/;

/** A non-2xx answer from the service (or a body that could not be understood). */
export class ApiError extends CliError {
  readonly status: number;
  readonly code: string;
  readonly rayId?: string;
  readonly documentation?: string;
  readonly metadata?: unknown;
  /** Set when a Retry-After header came with the answer, in ms from now. */
  retryAfterMs?: number;

  constructor(status: number, body: ApiErrorBody, rayId?: string) {
    super(body.message);
    this.name = 'ApiError';
    this.status = status;
    this.code = body.code;
    this.rayId = body.ray_id ?? rayId;
    this.documentation = body.documentation;
    this.metadata = body.metadata;
    // The emulator's games per CI job end (deleted, expired) and their tokens with them: logging in changes nothing.
    if (status === 401 && GAME_GONE.test(body.message)) {
      this.hint = 'this game was deleted or has expired: make a new one with `gamehost emulator game create`';
    } else if (status === 401 || status === 403) {
      this.hint = 'check the token, or run `gamehost login`';
    }
  }

  get exitCode(): number {
    if (this.status === 401 || this.status === 403) return ExitCode.AUTH;
    // The matchmaker says an unknown lobby with a 400: it is exit 4 as the cloud routes' 404 for one is.
    if (this.status === 404 || this.code === 'MATCHMAKER_LOBBY_NOT_FOUND') return ExitCode.NOT_FOUND;
    if (this.status === 429 || this.status >= 500) return ExitCode.UNAVAILABLE;
    return ExitCode.UNEXPECTED;
  }
}

/** The service answered something the client cannot use (a link that is not a URL, a malformed plan). */
export class ResponseError extends CliError {
  readonly exitCode = ExitCode.UNEXPECTED;
  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'ResponseError';
    this.hint = hint;
  }
}

/** The request never got an HTTP answer: DNS, refused, reset, timeout, TLS. */
export class NetworkError extends CliError {
  readonly exitCode = ExitCode.NETWORK;
  readonly code: string;
  /** The host name (or address) the request went to, when known: the retry rules tell loopback from remote by it. */
  readonly hostname?: string;
  constructor(message: string, code: string, options?: { cause?: unknown; hostname?: string }) {
    super(message, options);
    this.name = 'NetworkError';
    this.code = code;
    this.hostname = options?.hostname;
  }
}

/** The upload could not finish: a part failed after its retries, or the file changed. */
export class UploadError extends CliError {
  readonly exitCode = ExitCode.UPLOAD;
  constructor(message: string, hint?: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UploadError';
    this.hint = hint;
  }
}

/** The user pressed Ctrl-C or the process got SIGTERM. */
export class InterruptedError extends CliError {
  readonly exitCode: number;
  constructor(signal: 'SIGINT' | 'SIGTERM', hint?: string) {
    super(signal === 'SIGINT' ? 'interrupted' : 'terminated');
    this.name = 'InterruptedError';
    this.exitCode = signal === 'SIGINT' ? ExitCode.SIGINT : ExitCode.SIGTERM;
    this.hint = hint;
  }
}

/** The CLI will not do what was asked, as things stand (data a running server holds): the message says why. */
export class RefusedError extends CliError {
  readonly exitCode = ExitCode.UNEXPECTED;
  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'RefusedError';
    this.hint = hint;
  }
}

/**
 * stdout's reader went away before the result was written: the work stops (as SIGPIPE would stop it) and the exit
 * code says the result never arrived. Nothing can be said on stdout, and nothing is said on stderr, as Unix tools.
 */
export class OutputClosedError extends CliError {
  readonly exitCode = ExitCode.OUTPUT_CLOSED;
  override readonly reported = true;
  constructor(options?: { cause?: unknown }) {
    super('stdout was closed before the result was written', options);
    this.name = 'OutputClosedError';
  }
}

/** What the CLI exits with for each of the emulator's own failures. */
const EMULATOR_EXIT_CODES: Record<FailureCode, number> = {
  DATA_DIR_UNUSABLE: ExitCode.UNEXPECTED,
  DATA_DIR_SERVED: ExitCode.UNEXPECTED,
  SQLITE_UNAVAILABLE: ExitCode.UNEXPECTED,
};

/** The emulator failed (its data directory, its SQLite driver): its own words and hint, the exit code of its code. */
export class EmulatorFailedError extends CliError {
  readonly exitCode: number;
  constructor(failure: EmulatorFailure) {
    super(failure.message, { cause: failure });
    this.name = 'EmulatorFailedError';
    this.exitCode = EMULATOR_EXIT_CODES[failure.code];
    this.hint = failure.hint;
  }
}

/**
 * The local Docker daemon could not do what a command asked of it (`build push --image`, a Dockerfile built): none
 * answers (5), no such image (4), a build that failed (1). Its message is one line.
 */
export class DockerError extends CliError {
  constructor(
    message: string,
    readonly exitCode: number = ExitCode.UNEXPECTED,
    hint?: string,
  ) {
    super(message);
    this.name = 'DockerError';
    this.hint = hint;
  }
}

/** An answer that is not what the service sends (an export that is not its CSV): nothing is kept of it. */
export class InvalidAnswerError extends CliError {
  readonly exitCode = ExitCode.UNEXPECTED;
  constructor(message: string, hint?: string) {
    super(message);
    this.name = 'InvalidAnswerError';
    this.hint = hint;
  }
}

/** What went wrong with a file, in a few words: `no such file`, `permission denied`. */
export function describeFsError(err: unknown): string {
  const code = (err as NodeJS.ErrnoException)?.code;
  switch (code) {
    case 'ENOENT':
      return 'no such file';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EISDIR':
      return 'is a directory';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    default:
      return (err as Error)?.message ?? String(err);
  }
}
