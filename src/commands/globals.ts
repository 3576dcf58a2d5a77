// The options every command takes, declared like a command's own, and read into the context's GlobalOptions.
import { DEFAULT_GLOBALS, type GlobalOptions } from '../context.js';
import { timeoutMs } from './args.js';
import type { OptionSpec, OptionValues } from './command.js';

export const GLOBAL_OPTIONS = [
  { flags: '--endpoint <url>', description: 'service endpoint (default: the embedded local emulator)' },
  { flags: '--token <token>', description: 'cloud token' },
  { flags: '--namespace-token <token>', description: 'namespace token for matchmaker calls (default: --token)' },
  { flags: '--game <id>', description: 'game id' },
  { flags: '--namespace <id>', description: 'namespace id' },
  { flags: '--json', description: 'print one JSON document on stdout' },
  { flags: '-q, --quiet', description: 'print nothing but errors and data' },
  { flags: '--no-color', description: 'no colour' },
  { flags: '-v, --verbose', description: 'log requests and timings on stderr (never tokens)' },
  { flags: '--timeout <seconds>', description: 'timeout of each API call', default: String(DEFAULT_GLOBALS.timeoutMs / 1000), value: timeoutMs },
  { flags: '--insecure-http', description: 'allow a plain-http endpoint that is not on this machine' },
  { flags: '--profile <name>', description: 'saved profile to use (default: GAMEHOST_PROFILE, else the current profile)' },
  { flags: '--no-profile', description: 'ignore saved profiles' },
  { flags: '--no-input', description: 'never prompt: a command that would ask fails and names the flag to pass' },
] as const satisfies readonly OptionSpec[];

/** `--profile` and `--no-profile` share one key: a name, false when profiles are ignored, undefined when neither. */
type GlobalValues = Omit<OptionValues<typeof GLOBAL_OPTIONS>, 'profile'> & { profile: string | boolean | undefined };

export function readGlobals(v: GlobalValues): GlobalOptions {
  return {
    endpoint: v.endpoint,
    token: v.token,
    namespaceToken: v.namespaceToken,
    game: v.game,
    namespace: v.namespace,
    json: v.json,
    quiet: v.quiet,
    color: v.color,
    verbose: v.verbose,
    insecureHttp: v.insecureHttp,
    timeoutMs: v.timeout,
    profile: v.profile === false ? false : typeof v.profile === 'string' ? v.profile : undefined,
    input: v.input,
  };
}
