// The options every command takes, and their defaults: a module of its own so that building the command tree
// for --help does not load the context (and what the context loads).
import { timeoutMs } from './commands/args.js';
import type { OptionSpec } from './commands/command.js';

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

/** The options every command takes, declared like a command's own, and read into the context's GlobalOptions. */
export const GLOBAL_OPTIONS = [
  { flags: '--endpoint <url>', description: 'service endpoint (default: the embedded local emulator; "embedded" names it, as CI needs for a push or a lobby)' },
  { flags: '--token <token>', description: 'cloud token' },
  { flags: '--namespace-token <token>', description: 'namespace token for matchmaker calls (default: one made with the cloud token)' },
  { flags: '--game <id>', description: 'game id' },
  { flags: '--namespace <id>', description: 'namespace id' },
  { flags: '--json', description: 'print one JSON document on stdout' },
  { flags: '-q, --quiet', description: 'print only what a script wants (each command says what) and errors' },
  { flags: '--no-color', description: 'no colour' },
  { flags: '-v, --verbose', description: 'log requests and timings on stderr (never tokens)' },
  {
    flags: '--timeout <seconds>',
    description: `timeout of each API call (default: ${DEFAULT_GLOBALS.timeoutMs / 1000}; lobby find and join: ${READY_WAIT_MS / 1000})`,
    value: timeoutMs,
  },
  { flags: '--insecure-http', description: 'allow a plain-http endpoint that is not on this machine' },
  { flags: '--profile <name>', description: 'saved profile to use (default: GAMEHOST_PROFILE, else the current profile)' },
  { flags: '--no-profile', description: 'ignore saved profiles' },
  { flags: '--no-input', description: 'never prompt: a command that would ask fails and names the flag to pass' },
] as const satisfies readonly OptionSpec[];

/** The global options that take a value: their value is never a command name. */
export const GLOBAL_VALUE_FLAGS = new Set(GLOBAL_OPTIONS.filter((o) => o.flags.includes('<')).flatMap((o) => o.flags.match(/-{1,2}[\w-]+/g)!));
