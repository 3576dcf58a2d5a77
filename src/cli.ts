// The command tree, in the order help lists it, and the mapping of errors to exit codes. Each command is declared
// once, in its own file (src/commands/<noun>/<verb>.ts); a definition imports only what parsing needs, so `--help`
// and `--version` never load undici, SQLite or the emulator.
import type { Context, ContextInit, IOStreams } from './context.js';
import { ExitCode, InterruptedError } from './errors.js';
import { defineGroup, readValues, type TreeNode } from './commands/command.js';
import { CommanderError, commandPath, createProgram, type Runner } from './commands/program.js';
import push from './commands/build/push.js';
import lobbyCreate from './commands/lobby/create.js';
import lobbyLogs from './commands/lobby/logs.js';
import historyExport from './commands/history/export.js';
import stats from './commands/stats.js';
import emulatorServe from './commands/emulator/serve.js';
import emulatorBuilds from './commands/emulator/builds.js';
import emulatorLobbyStop from './commands/emulator/lobby-stop.js';
import emulatorReset from './commands/emulator/reset.js';
import login from './commands/login.js';
import logout from './commands/logout.js';
import profileList from './commands/profile/list.js';
import profileUse from './commands/profile/use.js';
import profileShow from './commands/profile/show.js';
import { completionCommand } from './commands/completion.js';

const TREE: readonly TreeNode[] = [
  defineGroup('build', 'Push game server builds', [push]),
  defineGroup('lobby', 'Create lobbies and read their logs', [lobbyCreate, lobbyLogs]),
  defineGroup('history', 'Lobby history', [historyExport]),
  stats,
  defineGroup('emulator', 'Run the local emulator of the service', [
    emulatorServe,
    emulatorBuilds,
    defineGroup('lobby', "Act on the emulator's lobbies", [emulatorLobbyStop]),
    emulatorReset,
  ]),
  login,
  logout,
  defineGroup('profile', 'List, pick and show saved profiles', [profileList, profileUse, profileShow]),
  // Completion is generated from this very tree.
  completionCommand(() => TREE),
];

export function buildProgram(io: IOStreams, runner: Runner) {
  return createProgram(TREE, io, runner);
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
    const program = buildProgram(io, async (def, operands, opts, globals) => {
      const { createContext } = await import('./context.js');
      ctx = createContext(full, globals);
      const result = await def.run(ctx, def.parse(readValues(def.operands, def.options, operands, opts), ctx));
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
    init.io!.stderr!.write(`run \`gamehost ${commandPath(TREE, argv)}--help\` for usage\n`);
    return ExitCode.USAGE;
  }
  const [{ printError }, { createContext }] = await Promise.all([import('./output/errors.js'), import('./context.js')]);
  return printError(ctx ?? createContext(init), err);
}
