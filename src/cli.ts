// The command tree, in the order help lists it, and the mapping of errors to exit codes. Each command is declared
// once, in its own file (src/commands/<noun>/<verb>.ts), and loaded only when an invocation needs it: `--help`
// and `--version` never load the HTTP client, SQLite or the emulator, nor the definitions they do not show. Alone,
// they do not get here: bin/gamehost.js answers them from src/help.cts and package.json.
import type { Context, ContextInit } from './context.js';
import type { IOStreams } from './shared/io.js';
import { ExitCode, InterruptedError, OutputClosedError } from './errors.js';
import { command, group, readValues, type TreeNode } from './commands/command.js';
import { CommanderError, GLOBAL_VALUE_FLAGS, createProgram, groupOptionMistake, namedPath, type Runner } from './commands/program.js';
import { stdoutFailure } from './stdout-failure.cjs';

const TREE: readonly TreeNode[] = [
  group('build', 'Push and list game server builds', [
    command('push', () => import('./commands/build/push.js')),
    command('list', () => import('./commands/build/list.js')),
  ]),
  group('lobby', 'Create, find, join, list and stop lobbies; read their logs', [
    command('create', () => import('./commands/lobby/create.js')),
    command('logs', () => import('./commands/lobby/logs.js')),
    command('find', () => import('./commands/lobby/find.js')),
    command('join', () => import('./commands/lobby/join.js')),
    command('list', () => import('./commands/lobby/list.js')),
    command('stop', () => import('./commands/lobby/stop.js')),
  ]),
  command('deploy', () => import('./commands/deploy.js')),
  group('namespace', "The game's namespaces: create, deploy a version to, history, matchmaker bounds", [
    command('list', () => import('./commands/namespace/list.js')),
    command('create', () => import('./commands/namespace/create.js')),
    command('set-version', () => import('./commands/namespace/set-version.js')),
    command('history', () => import('./commands/namespace/history.js')),
    command('config', () => import('./commands/namespace/config.js')),
  ]),
  group('token', 'Namespace tokens for game clients and local servers', [command('create', () => import('./commands/token/create.js'))]),
  group('region', 'The regions lobbies run in', [command('list', () => import('./commands/region/list.js'))]),
  group('history', 'Lobby history', [command('export', () => import('./commands/history/export.js'))]),
  command('stats', () => import('./commands/stats.js')),
  group('emulator', 'Run the local emulator of the service', [
    command('serve', () => import('./commands/emulator/serve.js')),
    group(
      'builds',
      "List and delete the emulator's builds",
      [command('list', () => import('./commands/emulator/builds.js')), command('delete', () => import('./commands/emulator/builds-delete.js'))],
      'list',
    ),
    group('lobby', "Act on the emulator's lobbies", [
      command('stop', () => import('./commands/emulator/lobby-stop.js')),
      command('env', () => import('./commands/emulator/lobby-env.js')),
    ]),
    group('game', 'Games of their own for CI jobs on a shared emulator', [
      command('create', () => import('./commands/emulator/game-create.js')),
      command('list', () => import('./commands/emulator/game-list.js')),
      command('delete', () => import('./commands/emulator/game-delete.js')),
    ]),
    command('reset', () => import('./commands/emulator/reset.js')),
  ]),
  command('login', () => import('./commands/login.js')),
  command('logout', () => import('./commands/logout.js')),
  group('profile', 'List, pick and show saved profiles', [
    command('list', () => import('./commands/profile/list.js')),
    command('use', () => import('./commands/profile/use.js')),
    command('show', () => import('./commands/profile/show.js')),
  ]),
  group(
    'version',
    "The game's versions (alone: gamehost's own version)",
    [
      command('list', () => import('./commands/version/list.js')),
      command('show', () => import('./commands/version/show.js')),
      command('validate', () => import('./commands/version/validate.js')),
      command('cli', () => import('./commands/version/cli.js')),
    ],
    'cli',
  ),
  // Completion is generated from this very tree.
  command('completion', () => import('./commands/completion.js').then((m) => m.completionCommand(() => TREE))),
];

/** The program with the definitions `words` (argv after the script) need; every definition without `words`. */
export function buildProgram(io: IOStreams, runner: Runner, words?: readonly string[]) {
  return createProgram(TREE, io, runner, words);
}

/**
 * The first signal aborts the command, which stops, cleans up and reports. A second one skips the clean-up, but
 * not the report: `lastWords` prints it first, as it stands (the upload puts its resume hint on the interruption
 * the moment it happens). `timeout` sends its signal twice, to the command and to its process group, so a
 * second signal often comes within microseconds of the first.
 */
function installSignals(controller: AbortController, lastWords: () => void, onFirst: () => void): () => void {
  let count = 0;
  const handler = (signal: 'SIGINT' | 'SIGTERM') => {
    count++;
    if (count > 1) {
      lastWords();
      process.exit((controller.signal.reason as InterruptedError | undefined)?.exitCode ?? (signal === 'SIGINT' ? ExitCode.SIGINT : ExitCode.SIGTERM));
    }
    onFirst();
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

/**
 * The exit code tells the truth about the output: a stderr whose reader went away only stops the messages (its
 * writes are dropped, the work goes on); a stdout whose reader went away before the result was written stops the
 * work and ends the run with 141 (see ExitCode.OUTPUT_CLOSED).
 */
function watchOutput(io: IOStreams, controller: AbortController): { closed(): boolean; failure(): Error | null | undefined; dispose(): void } {
  let closed = false;
  let failure: Error | undefined;
  const onStdout = (err: Error) => {
    closed = true;
    failure = err;
    if (!controller.signal.aborted) controller.abort(new OutputClosedError({ cause: err }));
  };
  const onStderr = () => {};
  io.stdout.on('error', onStdout);
  io.stderr.on('error', onStderr);
  return {
    // `errored` is set the moment a write fails; the 'error' event comes a tick later.
    closed: () => closed || io.stdout.errored != null,
    failure: () => failure ?? io.stdout.errored,
    dispose() {
      io.stdout.off('error', onStdout);
      io.stderr.off('error', onStderr);
    },
  };
}

/** Resolves once what was written to `stream` has left the process, or the stream failed. */
function flushed(stream: IOStreams['stdout']): Promise<void> {
  if (stream.writableLength === 0 || stream.destroyed) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done).off('error', done).off('close', done);
      resolve();
    };
    stream.on('drain', done).on('error', done).on('close', done);
  });
}

/** Runs one invocation; returns the exit code. `argv` is the full process argv (node, script, ...args). */
export async function main(argv: string[], init: ContextInit = {}): Promise<number> {
  let uninstall: (() => void) | undefined;
  const controller = new AbortController();
  const outer = init.signal;
  const forward = () => controller.abort(outer!.reason);
  // The context is built only when a command runs: --help and --version never load it.
  let ctx: Context | undefined;
  // Loaded at the first signal, so that a second one can report synchronously; `reported` once the error is written.
  let printError: typeof import('./output/errors.js').printError | undefined;
  let reported = false;
  const lastWords = () => {
    if (reported) return;
    reported = true;
    const reason = controller.signal.reason as InterruptedError;
    if (ctx && printError) printError(ctx, reason);
    // Both signals in one turn of the event loop (timeout's): the same lines, uncoloured.
    else io.stderr.write(`error: ${reason.message}\n${reason.hint ? `  ${reason.hint}\n` : ''}`);
  };
  const onFirstSignal = () => void import('./output/errors.js').then((m) => (printError = m.printError), () => {});
  if (outer) {
    if (outer.aborted) forward();
    else outer.addEventListener('abort', forward, { once: true });
  } else {
    uninstall = installSignals(controller, lastWords, onFirstSignal);
  }
  const signal = controller.signal;
  const io: IOStreams = {
    stdin: init.io?.stdin ?? process.stdin,
    stdout: init.io?.stdout ?? process.stdout,
    stderr: init.io?.stderr ?? process.stderr,
  };
  const output = watchOutput(io, controller);
  const full: ContextInit = { ...init, io, signal };
  let code: number = ExitCode.OK;
  try {
    argv = helpForGroup(versionAsCommand(argv), io);
    const program = await buildProgram(
      io,
      async (def, operands, opts, globals) => {
        const { createContext } = await import('./context.js');
        ctx = createContext(full, globals, def.writes === true);
        const result = await def.run(ctx, await def.parse(readValues(def.operands, def.options, operands, opts), ctx));
        if (typeof result === 'number') code = result;
      },
      argv.slice(2),
    );
    await program.parseAsync(argv);
    await flushed(io.stdout);
  } catch (err) {
    // Marked reported once written: a second signal before then prints it itself, and exits.
    code = await reportError(argv, full, ctx, signal.aborted ? signal.reason : output.closed() ? new OutputClosedError({ cause: err }) : err);
    reported = true;
  } finally {
    await ctx?.close().catch(() => {});
    uninstall?.();
    outer?.removeEventListener('abort', forward);
    output.dispose();
  }
  // The work may be done, but its result did not arrive: its reader went away (141, as cat's), or stdout failed
  // (a full disk: one line saying so, 1).
  if (!output.closed() || code === ExitCode.SIGINT || code === ExitCode.SIGTERM) return code;
  const why = stdoutFailure(output.failure());
  if (why === undefined) return ExitCode.OUTPUT_CLOSED;
  io.stderr.write(`error: cannot write to stdout: ${why}\n`);
  return ExitCode.UNEXPECTED;
}

/**
 * `gamehost` and `gamehost lobby` alone show their help on stdout and exit 0, as gh does (commander writes it on
 * stderr, as for a mistake): a group named with nothing after it is asked for its help; with `--json`, which no help
 * is, it is the usage error of a missing command. An option it does not take,
 * or a global option without its value (`gamehost --bogus`, `gamehost --timeout`), is the usage error it is, and so
 * is a word naming no command after a group that has a default command (`gamehost version nope`).
 */
function helpForGroup(argv: string[], io: IOStreams): string[] {
  const words = argv.slice(2);
  if (words.includes('--')) return argv;
  const path = namedPath(TREE, words);
  const last = path.at(-1);
  if (last?.kind === 'command') return argv;
  // Where the words that are not options (nor global options' values) are.
  const operands = words.flatMap((w, i) => (!w.startsWith('-') && !GLOBAL_VALUE_FLAGS.has(words[i - 1] ?? '') ? [i] : []));
  // As commander reports its own mistakes: the line here, the way out by reportError.
  const mistake = (text: string) => {
    io.stderr.write(`error: ${text}\n`);
    return new CommanderError(1, 'commander.unknownCommand', text);
  };
  if (last?.kind === 'group' && last.defaultCommand !== undefined) {
    // Commander hands a word right after the group that names none of its commands to its default command, which
    // takes no operands (`version`'s, `emulator builds`'): it is the unknown command it is, not "too many arguments
    // for 'cli'". (A word after the default command's options is one of their values, or commander's to judge.)
    const at = operands[path.length];
    if (at !== undefined && words[at - 1] === last.name && !words.some((w) => w === '-h' || w === '--help')) throw mistake(`unknown command '${words[at]}'`);
    return argv;
  }
  if (operands.length !== path.length || words.some((w) => w === '-h' || w === '--help' || w === '-V' || w === '--version')) return argv;
  const wrong = groupOptionMistake(words);
  if (wrong !== undefined) throw mistake(wrong);
  // A script that asks for JSON gets no help text in its place: it named no command.
  if (words.includes('--json')) throw mistake('--json needs a command');
  return [...argv, '--help'];
}

/**
 * `--version` and `-V` before any command are the `version` command, so `--version --json` prints what
 * `version --json` prints (commander's own version flag knows nothing of --json).
 */
function versionAsCommand(argv: string[]): string[] {
  const words = argv.slice(2);
  const end = words.includes('--') ? words.indexOf('--') : words.length;
  const isFlag = (w: string, i: number) => i < end && (w === '--version' || w === '-V');
  if (!words.some(isFlag) || namedPath(TREE, words).length > 0) return argv;
  return [...argv.slice(0, 2), 'version', ...words.filter((w, i) => !isFlag(w, i))];
}

async function reportError(argv: string[], init: ContextInit, ctx: Context | undefined, err: unknown): Promise<number> {
  if (err instanceof CommanderError) {
    if (err.code === 'commander.helpDisplayed' || err.code === 'commander.version' || err.code === 'commander.help') {
      return ExitCode.OK;
    }
    // Commander already printed its one line; add the way out.
    init.io!.stderr!.write(`run \`gamehost ${namedPath(TREE, argv.slice(2)).map((n) => n.name + ' ').join('')}--help\` for usage\n`);
    return ExitCode.USAGE;
  }
  const [{ printError }, { createContext }] = await Promise.all([import('./output/errors.js'), import('./context.js')]);
  return printError(ctx ?? createContext(init), err);
}
