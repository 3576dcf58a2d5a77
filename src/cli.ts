// The whole command tree in one place. Each command's implementation is loaded only when it runs, so
// `--help` and `--version` never load undici, SQLite or the emulator.
import { createRequire } from 'node:module';
import type { Context, ContextInit, GlobalOptions, IOStreams } from './context.js';
import { ExitCode, InterruptedError, UsageError } from './errors.js';
import { version } from './version.js';

// Commander's CommonJS entry loads measurably faster than its ESM wrapper, and --help pays for every ms.
const { Command, CommanderError, Option } = createRequire(import.meta.url)('commander') as typeof import('commander');
type Command = import('commander').Command;
type Option = import('commander').Option;

/** Collects a repeatable option's values. */
const collect = (value: string, previous: string[] = []) => [...previous, value];
const DEFAULT_TIMEOUT_S = 30;

/** A command module: `parse` turns argv into typed options (and validates), `run` does the work. */
export interface CommandModule<O = unknown> {
  parse(args: string[], opts: Record<string, unknown>, ctx: Context): O;
  run(ctx: Context, options: O): Promise<number | void>;
}

interface CommandDef {
  name: string;
  args?: string;
  summary: string;
  options?: (Option | [flags: string, description: string, defaultValue?: string])[];
  examples: string[];
  /** More help, printed before the examples. */
  notes?: string;
  load: () => Promise<CommandModule<any>>;
}

interface GroupDef {
  name: string;
  summary: string;
  /** Groups nest: `emulator lobby stop`. */
  commands: (CommandDef | GroupDef)[];
}

const TREE: (GroupDef | CommandDef)[] = [
  {
    name: 'build',
    summary: 'Push game server builds',
    commands: [
      {
        name: 'push',
        args: '<file>',
        summary: 'Upload a game server image (file, directory or - for stdin) and register it as a build',
        options: [
          ['--tag <name:tag>', 'image tag, lowercase [0-9a-z_-] on each side of the colon (required)'],
          ['--name <display name>', 'display name of the build (default: the tag)'],
          new Option('--kind <kind>', 'image kind (default: detected for a directory, else docker_image)').choices(['docker_image', 'oci_bundle']),
          new Option('--compression <compression>', 'lz4 compresses before upload (default: lz4 for a file that is already LZ4, else none)').choices(['none', 'lz4']),
          ['--content-type <mime>', 'MIME type sent with the file', 'application/x-tar'],
          ['--concurrency <n>', 'parts uploaded at once (1-64)', '8'],
          ['--limit-rate <rate>', 'cap the upload at this many bytes per second, e.g. 20M'],
          ['--stall-timeout <seconds>', 'a part with no bytes moving this long is retried', '60'],
          ['--no-resume', 'start a fresh upload even when an earlier one of this file can be resumed'],
          new Option('--progress <mode>', 'progress on stderr: auto (a live line on a terminal, plain lines otherwise), plain, json, none').choices(['auto', 'plain', 'json', 'none']).default('auto'),
          ['--dry-run', 'show kind, compression, size, SHA-256 and parts; send nothing'],
        ],
        notes: 'With -q, prints the build id alone.',
        examples: [
          'gamehost build push server.tar --tag game-server:v1-4-2',
          'gamehost build push ./bundle --tag game-server:v2 --compression lz4   # a directory, packed and compressed',
          'docker save game:v1 | gamehost build push - --tag game-server:${GITHUB_SHA::12} --progress json --json   # in CI',
        ],
        load: () => import('./commands/build/push.js'),
      },
    ],
  },
  {
    name: 'lobby',
    summary: 'Create lobbies and read their logs',
    commands: [
      {
        name: 'create',
        summary: 'Create a lobby and join it as a player',
        options: [
          ['--game-mode <mode>', 'game mode of the lobby (required)'],
          ['--region <id>', 'region id, e.g. lnd-atl (default: the closest)'],
          ['--max-players <n>', 'player limit'],
          new Option('--publicity <publicity>', 'who may find the lobby').choices(['public', 'private']),
          new Option('--tag <key=value>', 'a lobby tag; repeat for more').argParser(collect),
          ['--config <json|@file>', 'lobby config passed to the server, inline JSON or @file'],
          ['--verification <json|@file>', 'verification data, inline JSON or @file'],
          new Option('--hcaptcha <response>', 'hCaptcha client response').conflicts('turnstile'),
          new Option('--turnstile <response>', 'Turnstile client response').conflicts('hcaptcha'),
        ],
        notes: 'With -q, prints the lobby id alone.',
        examples: [
          'gamehost lobby create --game-mode duos --region lnd-fra',
          'gamehost lobby create --game-mode default --tag map=dust --config \'{"round":3}\'',
          'LOBBY=$(gamehost lobby create --game-mode squads -q)   # in CI',
        ],
        load: () => import('./commands/lobby/create.js'),
      },
      {
        name: 'logs',
        args: '<lobby-id>',
        summary: "Show a lobby's status, timeline and job metrics",
        options: [
          ['--watch', 'poll until the lobby stops; exit 0 if it stopped cleanly, 1 if it failed'],
          ['--interval <seconds>', 'seconds between polls with --watch (default: 2)'],
          ['--chart', 'draw CPU and memory as line charts with axes'],
          ['--utc', 'show times in UTC instead of the local zone'],
        ],
        examples: [
          'gamehost lobby logs "$LOBBY" --watch --chart',
          'gamehost lobby logs "$LOBBY" --json | jq .lobby.status   # in CI',
          'gamehost lobby logs "$LOBBY" --watch --interval 5 > lobby.log   # in CI: one line per change, exit 1 if it failed',
        ],
        load: () => import('./commands/lobby/logs.js'),
      },
    ],
  },
  {
    name: 'history',
    summary: 'Lobby history',
    commands: [
      {
        name: 'export',
        summary: 'Export the lobby history of a time window as CSV',
        options: [
          ['--since <duration>', 'window ending now, e.g. 90m, 24h, 7d'],
          ['--from <time>', 'window start: RFC 3339 or epoch ms'],
          ['--to <time>', 'window end: RFC 3339 or epoch ms (default: now)'],
          ['-o, --output <file>', 'where to write the rows; - for stdout (default: a file named after the window)'],
          new Option('--format <format>', 'csv as served, json (JSON lines), or table (on stdout)').choices(['csv', 'json', 'table']),
          ['--url-only', 'print the presigned URL of the CSV and download nothing'],
          ['--utc', 'show times in UTC instead of the local zone'],
          ['--wide', 'with --format table: every column at full width, none left out'],
        ],
        notes: 'With -q, prints the path of the file written alone.',
        examples: [
          'gamehost history export --since 7d --format table',
          'gamehost history export --from 2026-11-01T00:00:00Z --to 2026-11-08T00:00:00Z -o week.csv',
          'gamehost history export --since 24h --format json -o - | jq .query_uptime_ms   # in CI',
        ],
        load: () => import('./commands/history/export.js'),
      },
    ],
  },
  {
    name: 'stats',
    summary: 'Show player statistics: total, per game mode and per region',
    options: [
      ['--watch [seconds]', 'refresh every few seconds (default: 10) and show the change since the last refresh'],
      ['--utc', 'show times in UTC instead of the local zone'],
    ],
    examples: ['gamehost stats', 'gamehost stats --watch 5', 'gamehost stats --json | jq .player_count   # in CI'],
    load: () => import('./commands/stats.js'),
  },
  {
    name: 'emulator',
    summary: 'Run the local emulator of the service',
    commands: [
      {
        name: 'serve',
        summary: 'Run the emulator as a long-lived local server',
        options: [
          ['--host <host>', 'address to listen on', '127.0.0.1'],
          ['--port <port>', 'port to listen on (0 picks a free one)', '6420'],
          ['--data-dir <dir>', 'where the emulator keeps its state (default: the user data directory)'],
          ['--config <file>', 'JSON file with game modes, regions, delays and limits'],
          ['--part-size <bytes>', 'multipart part size, e.g. 64KiB or 1MiB (default 100MiB; for tests)'],
          ['--faults <spec>', 'inject failures, e.g. put-error=0.1,put-reset=0.05,latency=50ms,rate-limit=0.05'],
          ['--env', 'print export GAMEHOST_…=… lines for a shell instead of the table'],
        ],
        notes: 'With -q, prints the endpoint alone.',
        examples: [
          'gamehost emulator serve',
          'gamehost emulator serve --env > emulator.env & sleep 1; . ./emulator.env; gamehost stats',
          'gamehost emulator serve --port 0 --data-dir .emulator --json > emulator.json &   # in CI',
        ],
        load: () => import('./commands/emulator/serve.js'),
      },
      {
        name: 'builds',
        summary: 'List the builds the emulator holds, newest first',
        options: [
          ['--data-dir <dir>', "the emulator's data directory (default: the embedded emulator's; with --endpoint: that server's)"],
          ['--wide', 'every column at full width, none left out'],
        ],
        notes: 'With -q, prints the build ids alone, one a line.',
        examples: [
          'gamehost emulator builds',
          'gamehost emulator builds --json | jq -r \'.builds[] | select(.complete) | .image_tag\'   # in CI',
          'gamehost emulator builds --endpoint http://127.0.0.1:6420   # a running emulator serve',
        ],
        load: () => import('./commands/emulator/builds.js'),
      },
      {
        name: 'lobby',
        summary: "Act on the emulator's lobbies",
        commands: [
          {
            name: 'stop',
            args: '<lobby-id>',
            summary: 'Stop a lobby as if its server process had exited',
            options: [
              ['--exit-code <n>', 'exit code of the lobby process (default 0)'],
              ['--failed', 'mark the lobby failed (default: failed when the exit code is not 0)'],
              ['--data-dir <dir>', "the emulator's data directory (default: the embedded emulator's; with --endpoint: that server's)"],
            ],
            notes: 'With -q, prints the lobby id alone.',
            examples: [
              'gamehost emulator lobby stop "$LOBBY"',
              'gamehost emulator lobby stop "$LOBBY" --exit-code 137 --json | jq .lobby.status   # in CI',
              'gamehost emulator lobby stop "$LOBBY" --endpoint http://127.0.0.1:6420   # a running emulator serve',
            ],
            load: () => import('./commands/emulator/lobby-stop.js'),
          },
        ],
      },
      {
        name: 'reset',
        summary: "Delete the emulator's lobbies, builds, exports and tokens",
        options: [
          ['--yes', 'do not ask (required when stdin is not a terminal)'],
          ['--data-dir <dir>', "the emulator's data directory (default: the embedded emulator's)"],
        ],
        examples: ['gamehost emulator reset', 'gamehost emulator reset --yes --data-dir .emulator   # in CI'],
        load: () => import('./commands/emulator/reset.js'),
      },
    ],
  },
  {
    name: 'login',
    summary: 'Save an endpoint, tokens and ids as a profile',
    options: [
      ['--token-stdin', 'read the cloud token from stdin (default: a hidden prompt on a terminal)'],
      ['--namespace-token-stdin', 'read the namespace token from stdin, after the cloud token when both are asked for'],
    ],
    notes:
      'Saves the profile named by --profile or GAMEHOST_PROFILE (default "default"):\n' +
      '--endpoint (default https://api.rivet.gg), --game, --namespace and the tokens,\n' +
      'in config.json in the config directory (mode 0600). Tokens are never flags: on a\n' +
      'terminal login asks for the cloud token, then the namespace token, unechoed.\n' +
      'The first profile saved becomes the current one.',
    examples: [
      'gamehost login --endpoint api.rivet.gg --game "$GAME_ID" --namespace "$NAMESPACE_ID"',
      'gamehost login --profile staging --endpoint https://staging.example.com',
      'printf \'%s\\n%s\\n\' "$CLOUD_TOKEN" "$NS_TOKEN" | gamehost login --token-stdin --namespace-token-stdin --no-input   # in CI',
    ],
    load: () => import('./commands/login.js'),
  },
  {
    name: 'logout',
    summary: 'Remove a profile and its tokens',
    notes: 'Removes the profile named by --profile or GAMEHOST_PROFILE, else the current one.',
    examples: [
      'gamehost logout',
      'gamehost logout --profile staging',
      'gamehost logout --profile ci --no-input || true   # in CI, when the job ends',
    ],
    load: () => import('./commands/logout.js'),
  },
  {
    name: 'profile',
    summary: 'List, pick and show saved profiles',
    commands: [
      {
        name: 'list',
        summary: 'List the saved profiles; the current one is marked *',
        options: [['--wide', 'every column at full width, none left out']],
        notes: 'With -q, prints the profile names alone, one a line.',
        examples: ['gamehost profile list', "gamehost profile list --json | jq -r '.profiles[].name'   # in CI"],
        load: () => import('./commands/profile/list.js'),
      },
      {
        name: 'use',
        args: '<name>',
        summary: 'Make a profile the current one',
        examples: [
          'gamehost profile use staging',
          'GAMEHOST_PROFILE=staging gamehost stats   # in CI: one command, without changing the current profile',
        ],
        load: () => import('./commands/profile/use.js'),
      },
      {
        name: 'show',
        args: '[name]',
        summary: 'Show a profile, tokens redacted (default: the selected one)',
        examples: [
          'gamehost profile show',
          'gamehost profile show staging',
          'gamehost profile show --json | jq -r .endpoint   # in CI',
        ],
        load: () => import('./commands/profile/show.js'),
      },
    ],
  },
  {
    name: 'version',
    summary: 'Print the version (as --version and -V do)',
    examples: ['gamehost version', 'gamehost version --json   # in CI: with the Node.js version and platform'],
    load: () => import('./commands/version.js'),
  },
  {
    name: 'completion',
    args: '<shell>',
    summary: 'Print a shell completion script: bash, zsh or fish',
    examples: [
      'gamehost completion bash > ~/.local/share/bash-completion/completions/gamehost',
      'gamehost completion zsh > "${fpath[1]}/_gamehost"; gamehost completion fish > ~/.config/fish/completions/gamehost.fish',
      'gamehost completion bash | bash -n   # in CI: the script parses',
    ],
    load: () => import('./commands/completion.js'),
  },
];

const EXIT_CODES_HELP = `Exit codes:
  0    ok
  1    unexpected error
  2    usage or invalid input (nothing was sent)
  3    not authenticated or forbidden (401/403); try gamehost login
  4    not found
  5    rate limited or service unavailable, after retries
  6    network error (DNS, refused, timeout, TLS)
  7    upload failed (a part failed after retries, or the file changed)
  130  interrupted (Ctrl-C)
  143  terminated (SIGTERM)
`;

function globalsFrom(opts: Record<string, unknown>): GlobalOptions {
  const str = (v: unknown) => (typeof v === 'string' ? v : undefined);
  const timeout = opts.timeout === undefined ? undefined : Number(opts.timeout);
  if (timeout !== undefined && !(Number.isFinite(timeout) && timeout > 0)) {
    throw new UsageError(`--timeout must be a positive number of seconds, not "${String(opts.timeout)}"`);
  }
  return {
    endpoint: str(opts.endpoint),
    token: str(opts.token),
    namespaceToken: str(opts.namespaceToken),
    game: str(opts.game),
    namespace: str(opts.namespace),
    json: opts.json === true,
    quiet: opts.quiet === true,
    color: opts.color !== false,
    verbose: opts.verbose === true,
    insecureHttp: opts.insecureHttp === true,
    timeoutMs: Math.round((timeout ?? DEFAULT_TIMEOUT_S) * 1000),
    profile: opts.profile === false ? false : str(opts.profile),
    input: opts.input !== false,
  };
}

function addExamples(cmd: Command, examples: string[]): void {
  cmd.addHelpText('after', '\nExamples:\n' + examples.map((e) => `  $ ${e}`).join('\n') + '\n');
}

/** Runs a command's module with a context made from its parsed globals. */
export type Runner = (def: CommandDef, args: string[], opts: Record<string, unknown>, globals: GlobalOptions) => Promise<void>;

export function buildProgram(io: IOStreams, runner: Runner): Command {
  const program = new Command('gamehost');
  program
    .description('Run your multiplayer backend: push builds, create lobbies, read logs, export history, watch players.')
    .version(version, '-V, --version', 'print the version')
    .helpOption('-h, --help', 'show help')
    .helpCommand(false)
    .option('--endpoint <url>', 'service endpoint (default: the embedded local emulator)')
    .option('--token <token>', 'cloud token')
    .option('--namespace-token <token>', 'namespace token for matchmaker calls (default: --token)')
    .option('--game <id>', 'game id')
    .option('--namespace <id>', 'namespace id')
    .option('--json', 'print one JSON document on stdout')
    .option('-q, --quiet', 'print only what a script wants (each command says what) and errors')
    .option('--no-color', 'no colour')
    .option('-v, --verbose', 'log requests and timings on stderr (never tokens)')
    .option('--timeout <seconds>', 'timeout of each API call', String(DEFAULT_TIMEOUT_S))
    .option('--insecure-http', 'allow a plain-http endpoint that is not on this machine')
    .option('--profile <name>', 'saved profile to use (default: GAMEHOST_PROFILE, else the current profile)')
    .option('--no-profile', 'ignore saved profiles')
    .option('--no-input', 'never prompt: a command that would ask fails and names the flag to pass')
    .showSuggestionAfterError(true)
    // Subcommand help lists the global options too, so each command's --help is complete on its own.
    .configureHelp({ showGlobalOptions: true })
    .addHelpText(
      'after',
      `\n${EXIT_CODES_HELP}\nEnvironment: GAMEHOST_ENDPOINT, GAMEHOST_TOKEN, GAMEHOST_NAMESPACE_TOKEN,\n` +
        '  GAMEHOST_GAME, GAMEHOST_NAMESPACE, GAMEHOST_PROFILE (RIVET_API_ENDPOINT and\n' +
        '  RIVET_TOKEN are read as fallbacks). Each value comes from the first of: flag,\n' +
        '  environment, selected profile, embedded emulator.\n',
    );

  const attach = (parent: Command, def: CommandDef) => {
    const cmd = parent.command(def.name + (def.args ? ` ${def.args}` : '')).description(def.summary);
    for (const opt of def.options ?? []) {
      if (opt instanceof Option) cmd.addOption(opt);
      else cmd.option(opt[0], opt[1], opt[2]);
    }
    if (def.notes) cmd.addHelpText('after', `\n${def.notes}`);
    addExamples(cmd, def.examples);
    cmd.action(async (...received: unknown[]) => {
      const command = received.at(-1) as Command;
      const args = received.slice(0, -2).flat() as string[];
      await runner(def, args, command.opts(), globalsFrom(command.optsWithGlobals()));
    });
  };

  const addGroup = (parent: Command, def: GroupDef) => {
    const group = parent.command(def.name).description(def.summary).helpCommand(false);
    for (const sub of def.commands) {
      if ('commands' in sub) addGroup(group, sub);
      else attach(group, sub);
    }
  };
  for (const def of TREE) {
    if ('commands' in def) {
      addGroup(program, def);
    } else {
      attach(program, def);
    }
  }

  program
    .command('help [topic...]')
    .description('show help for a command, or `gamehost help exit-codes`')
    .action((topic: string[]) => {
      if (topic.join(' ') === 'exit-codes') {
        io.stdout.write(EXIT_CODES_HELP);
        return;
      }
      let cmd: Command = program;
      for (const word of topic) {
        const next = cmd.commands.find((c) => c.name() === word);
        if (!next) throw new UsageError(`no help topic "${topic.join(' ')}"`, 'run `gamehost --help` for the commands');
        cmd = next;
      }
      cmd.outputHelp();
    });

  const configure = (cmd: Command) => {
    cmd.exitOverride().configureOutput({
      writeOut: (s) => io.stdout.write(s),
      writeErr: (s) => io.stderr.write(s),
      outputError: (s, write) => write(s),
      // Help wraps to the width of the stream it is written to, not to the process's own stdout.
      getOutHelpWidth: () => (io.stdout.isTTY ? (io.stdout.columns ?? 80) : 80),
      getErrHelpWidth: () => (io.stderr.isTTY ? (io.stderr.columns ?? 80) : 80),
    });
    cmd.commands.forEach(configure);
  };
  configure(program);
  return program;
}

function installSignals(controller: AbortController): () => void {
  let count = 0;
  const handler = (signal: 'SIGINT' | 'SIGTERM') => {
    count++;
    // A second Ctrl-C skips clean-up.
    if (count > 1) process.exit(signal === 'SIGINT' ? ExitCode.SIGINT : ExitCode.SIGTERM);
    controller.abort(new InterruptedError(signal));
  };
  const onInt = () => handler('SIGINT');
  const onTerm = () => handler('SIGTERM');
  process.on('SIGINT', onInt);
  process.on('SIGTERM', onTerm);
  return () => {
    process.off('SIGINT', onInt);
    process.off('SIGTERM', onTerm);
  };
}

/** Runs one invocation; returns the exit code. `argv` is the full process argv (node, script, ...args). */
export async function main(argv: string[], init: ContextInit = {}): Promise<number> {
  let uninstall: (() => void) | undefined;
  let signal = init.signal;
  if (!signal) {
    const controller = new AbortController();
    uninstall = installSignals(controller);
    signal = controller.signal;
  }
  const io: IOStreams = {
    stdin: init.io?.stdin ?? process.stdin,
    stdout: init.io?.stdout ?? process.stdout,
    stderr: init.io?.stderr ?? process.stderr,
  };
  const full: ContextInit = { ...init, io, signal };
  // The context is built only when a command runs: --help and --version never load it.
  let ctx: Context | undefined;
  let code: number = ExitCode.OK;
  try {
    const program = buildProgram(io, async (def, args, opts, globals) => {
      const { createContext } = await import('./context.js');
      ctx = createContext(full, globals);
      const mod = await def.load();
      const result = await mod.run(ctx, mod.parse(args, opts, ctx));
      if (typeof result === 'number') code = result;
    });
    await program.parseAsync(argv);
  } catch (err) {
    code = await reportError(argv, full, ctx, signal.aborted ? signal.reason : err);
  } finally {
    await ctx?.close().catch(() => {});
    uninstall?.();
  }
  return code;
}

async function reportError(argv: string[], init: ContextInit, ctx: Context | undefined, err: unknown): Promise<number> {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') {
      return ExitCode.OK;
    }
    // Commander already printed its one line; add the way out.
    init.io!.stderr!.write(`run \`gamehost ${commandPath(argv)}--help\` for usage\n`);
    return ExitCode.USAGE;
  }
  const [{ printError }, { createContext }] = await Promise.all([import('./output/errors.js'), import('./context.js')]);
  return printError(ctx ?? createContext(init), err);
}

/** `lobby create ` for `gamehost lobby create --bad`: the words of argv that name commands. */
function commandPath(argv: string[]): string {
  const words: string[] = [];
  let level: readonly (GroupDef | CommandDef)[] = TREE;
  for (const word of argv.slice(2)) {
    const def = level.find((d) => d.name === word);
    if (!def) continue;
    words.push(word);
    if (!('commands' in def)) break;
    level = def.commands;
  }
  return words.map((w) => w + ' ').join('');
}
