// The program's own help text, and its top-level help written out with commander's layout, so that `gamehost --help`
// loads neither commander nor any command: commander alone costs 1.3x-1.5x a bare Node start. CommonJS, so that
// bin/gamehost.js answers it before Node starts its ES-module loader, which alone can cost 1.4x (docs/development.md).
// test/unit/top-level-help.test.ts holds this help to commander's of the real tree, byte for byte, at every width.
import type { OutStream } from './shared/io.js';

export const PROGRAM_SUMMARY = 'Run your multiplayer backend: push builds, create lobbies, read logs, export history, watch players.';
export const VERSION_FLAG = { flags: '-V, --version', description: 'print the version' };
export const HELP_FLAG = { flags: '-h, --help', description: 'show help' };
export const HELP_COMMAND = { usage: 'help [topic...]', description: 'show help for a command, or `gamehost help exit-codes`' };

export const EXIT_CODES_HELP = `Exit codes:
  0    ok
  1    refused or failed: the service turned the request down (a taken tag, an
       unknown game mode: the message says why), the CLI would not do it (data
       a running emulator holds), a prompt answered no, a lobby that --watch
       saw fail, or an unexpected failure (a report is written)
  2    usage or invalid input (nothing was sent)
  3    not authenticated or forbidden (401/403); try gamehost login
  4    not found (a lobby, build or game the service does not know)
  5    rate limited or service unavailable, after retries; for emulator serve:
       its port in use, its database not answering, no Docker for --run-build
  6    network error (DNS, refused, timeout, TLS)
  7    upload failed (a part failed after retries, or the file changed)
  130  interrupted (Ctrl-C)
  141  stdout closed before the result was written (its reader went away)
       a closed stderr is no failure: the messages stop, the work goes on
  143  terminated (SIGTERM)
`;

/** What the program's help says after its commands. */
export const PROGRAM_HELP_AFTER =
  `\n${EXIT_CODES_HELP}\nEnvironment: GAMEHOST_ENDPOINT, GAMEHOST_TOKEN, GAMEHOST_NAMESPACE_TOKEN,\n` +
  '  GAMEHOST_GAME, GAMEHOST_NAMESPACE, GAMEHOST_PROFILE (RIVET_API_ENDPOINT and\n' +
  '  RIVET_TOKEN are read as fallbacks). Each value comes from the first of: flag,\n' +
  '  environment, selected profile, embedded emulator.\n';

/** Help wraps to the width of the stream it is written to (0 on some terminals: then it does not wrap). */
export function helpWidth(stream: OutStream): number {
  return stream.isTTY ? (stream.columns ?? 80) : 80;
}

/** `gamehost`, `gamehost --help`, `-h` or `help`, alone. */
export function asksTopLevelHelp(words: readonly string[]): boolean {
  return words.length === 0 || (words.length === 1 && (words[0] === '--help' || words[0] === '-h' || words[0] === 'help'));
}

/** The program's help, as `stream` is wide. */
export function topLevelHelp(stream: OutStream): string {
  return formatHelp(TOP_LEVEL_HELP, helpWidth(stream));
}

/** A help's parts: its sections are a heading and [term, description] rows, laid out in one column of terms. */
export interface HelpText {
  usage: string;
  description: string;
  sections: readonly (readonly [heading: string, rows: readonly (readonly [term: string, description: string])[]])[];
  after: string;
}

/**
 * What commander lists at the top of the real tree: src/cli.ts's TREE (its groups' summaries), the top-level
 * commands' definitions (`[options]` when a command has options, then its operands) and the global options of
 * src/commands/program.ts, in their order.
 */
export const TOP_LEVEL_HELP: HelpText = {
  usage: 'gamehost [options] [command]',
  description: PROGRAM_SUMMARY,
  sections: [
    [
      'Options:',
      [
        [VERSION_FLAG.flags, VERSION_FLAG.description],
        ['--endpoint <url>', 'service endpoint (default: the embedded local emulator; "embedded" names it, as CI needs for a push or a lobby)'],
        ['--token <token>', 'cloud token'],
        ['--namespace-token <token>', 'namespace token for matchmaker calls (default: one made with the cloud token)'],
        ['--game <id>', 'game id'],
        ['--namespace <id>', 'namespace id, or its name id (staging)'],
        ['--json', 'print one JSON document on stdout'],
        ['-q, --quiet', 'print only what a script wants (each command says what) and errors'],
        ['--no-color', 'no colour'],
        ['-v, --verbose', 'log requests and timings on stderr (never tokens)'],
        ['--timeout <seconds>', 'timeout of each API call (default: 30; lobby find and join: 60)'],
        ['--insecure-http', 'allow a plain-http endpoint that is not on this machine'],
        ['--profile <name>', 'saved profile to use (default: GAMEHOST_PROFILE, else the current profile)'],
        ['--no-profile', 'ignore saved profiles'],
        ['--no-input', 'never prompt: a command that would ask fails and names the flag to pass'],
        [HELP_FLAG.flags, HELP_FLAG.description],
      ],
    ],
    [
      'Commands:',
      [
        ['build', 'Push and list game server builds'],
        ['lobby', 'Create, find, join, list and stop lobbies; read their logs'],
        ['deploy [options] [namespace]', "Deploy the project's rivet.yaml: push its builds, create a version, deploy it to a namespace"],
        ['namespace', "The game's namespaces: create, deploy a version to, history, matchmaker bounds"],
        ['token', 'Namespace tokens for game clients and local servers'],
        ['region', 'The regions lobbies run in'],
        ['history', 'Lobby history'],
        ['stats [options]', 'Show player statistics: total, per game mode and per region'],
        ['emulator', 'Run the local emulator of the service'],
        ['login [options]', 'Save an endpoint, tokens and ids as a profile'],
        ['logout', 'Remove a profile and its tokens'],
        ['profile', 'List, pick and show saved profiles'],
        ['version', "The game's versions (alone: gamehost's own version)"],
        ['completion <shell>', 'Print a shell completion script: bash, zsh or fish'],
        [HELP_COMMAND.usage, HELP_COMMAND.description],
      ],
    ],
  ],
  after: PROGRAM_HELP_AFTER,
};

// Below this, commander does not wrap.
const MIN_WIDTH_TO_WRAP = 40;

/** Commander's Help.formatHelp with its default styles (none), then `after` and a newline, as addHelpText writes it. */
function formatHelp(help: HelpText, width: number): string {
  const termWidth = Math.max(...help.sections.flatMap(([, rows]) => rows.map(([term]) => term.length)));
  const item = ([term, description]: readonly [string, string]) => {
    if (!description) return `  ${term}`;
    const remaining = width - termWidth - 4;
    // Commander leaves a description with an indented line as it was written.
    const text = remaining < MIN_WIDTH_TO_WRAP || /\n[^\S\r\n]/.test(description) ? description : boxWrap(description, remaining).replace(/\n/g, '\n' + ' '.repeat(termWidth + 2));
    return `  ${term.padEnd(termWidth)}  ${text.replace(/\n/g, '\n  ')}`;
  };
  const lines = [`Usage: ${help.usage}`, ''];
  if (help.description) lines.push(boxWrap(help.description, width), '');
  for (const [heading, rows] of help.sections) if (rows.length) lines.push(heading, ...rows.map(item), '');
  return `${lines.join('\n')}${help.after}\n`;
}

/** Commander's Help.boxWrap: words are filled into lines of `width`, the space at each break dropped. */
function boxWrap(text: string, width: number): string {
  if (width < MIN_WIDTH_TO_WRAP) return text;
  return text
    .split(/\r\n|\n/)
    .map((line) => {
      const chunks = line.match(/\s*\S+/g);
      if (!chunks) return '';
      const wrapped: string[] = [];
      let current = chunks[0]!;
      for (const chunk of chunks.slice(1)) {
        if (current.length + chunk.length <= width) {
          current += chunk;
        } else {
          wrapped.push(current);
          current = chunk.trimStart();
        }
      }
      wrapped.push(current);
      return wrapped.join('\n');
    })
    .join('\n');
}
