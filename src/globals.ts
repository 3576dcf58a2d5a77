// The options every command takes, and their defaults: a module of its own so that building the command tree
// for --help does not load the context (and what the context loads).

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
  /** --timeout was given: it wins over a command's own default (lobby find and join wait longer). */
  timeoutGiven: boolean;
  /** --profile <name>; false with --no-profile (saved profiles ignored). */
  profile?: string | false;
  /** false with --no-input: a command that would prompt fails instead. */
  input: boolean;
}

/**
 * lobby find and join: the service holds the answer until the lobby is ready, up to 50 s (then 500
 * API_REQUEST_TIMEOUT), so without --timeout the CLI waits longer than that for it.
 */
export const READY_WAIT_MS = 60_000;

export const DEFAULT_GLOBALS: GlobalOptions = {
  json: false,
  quiet: false,
  color: true,
  verbose: false,
  insecureHttp: false,
  timeoutMs: 30_000,
  timeoutGiven: false,
  input: true,
};
