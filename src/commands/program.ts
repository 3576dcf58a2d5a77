// Commander's tree, built from the command definitions: options, defaults, choices, examples and notes come from
// each definition, so help, parsing and completion cannot disagree with the code that runs. Only the definitions
// an invocation can use are loaded: the one it runs, and those whose summaries its help lists.
import { createRequire } from 'node:module';
import type { IOStreams } from '../shared/io.js';
import { DEFAULT_GLOBALS, READY_WAIT_MS, type GlobalOptions } from '../globals.js';
import { UsageError } from '../errors.js';
import { EXIT_CODES_HELP, HELP_COMMAND, HELP_FLAG, PROGRAM_HELP_AFTER, PROGRAM_SUMMARY, VERSION_FLAG, helpWidth } from '../help.cjs';
import { version } from '../version.js';
import { timeoutMs } from './args.js';
import { readValues, type CommandDef, type CommandNode, type GroupNode, type OptionSpec, type OptionValues, type TreeNode } from './command.js';

// Commander's CommonJS entry loads measurably faster than its ESM wrapper, and --help pays for every ms.
const { Command, CommanderError, Option } = createRequire(import.meta.url)('commander') as typeof import('commander');
export { CommanderError };
type Command = import('commander').Command;

/** The options every command takes, declared like a command's own, and read into the context's GlobalOptions. */
const GLOBAL_OPTIONS = [
  { flags: '--endpoint <url>', description: 'service endpoint (default: the embedded local emulator; "embedded" names it, as CI needs for a push or a lobby)' },
  { flags: '--token <token>', description: 'cloud token' },
  { flags: '--namespace-token <token>', description: 'namespace token for matchmaker calls (default: one made with the cloud token)' },
  { flags: '--game <id>', description: 'game id' },
  { flags: '--namespace <id>', description: 'namespace id, or its name id (staging)' },
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

/** `--profile` and `--no-profile` share one key: a name, false when profiles are ignored, undefined when neither. */
type GlobalValues = Omit<OptionValues<typeof GLOBAL_OPTIONS>, 'profile'> & { profile: string | boolean | undefined };

function readGlobals(v: GlobalValues): GlobalOptions {
  return {
    endpoint: v.endpoint,
    token: v.token,
    namespaceToken: v.namespaceToken,
    game: v.game,
    // A string only: a command's own --no-namespace (deploy) shares the key, as true or false.
    namespace: typeof v.namespace === 'string' ? v.namespace : undefined,
    json: v.json,
    quiet: v.quiet,
    color: v.color,
    verbose: v.verbose,
    insecureHttp: v.insecureHttp,
    timeoutMs: v.timeout ?? DEFAULT_GLOBALS.timeoutMs,
    timeoutGiven: v.timeout !== undefined,
    profile: v.profile === false ? false : typeof v.profile === 'string' ? v.profile : undefined,
    input: v.input,
  };
}

/** Runs a command with its operands, its options as commander parsed them, and the parsed globals. */
export type Runner = (def: CommandDef, operands: (string | undefined)[], opts: Record<string, unknown>, globals: GlobalOptions) => Promise<void>;

function toOption(spec: OptionSpec) {
  const option = new Option(spec.flags, spec.description);
  if (spec.default !== undefined) option.default(spec.default);
  if (spec.choices) option.choices(spec.choices);
  if (spec.repeatable) option.argParser((value: string, previous: string[] = []) => [...previous, value]);
  if (spec.conflicts) option.conflicts(spec.conflicts);
  return option;
}

/** The global options that take a value: their value is never a command name. */
export const GLOBAL_VALUE_FLAGS = new Set(GLOBAL_OPTIONS.filter((o) => o.flags.includes('<')).flatMap((o) => o.flags.match(/-{1,2}[\w-]+/g)!));

/**
 * What is wrong with the options of words that name a group (or nothing), in commander's words: one the program
 * does not take, or a global option without its value. Commander itself answers either with the group's help, as
 * for a group named alone.
 */
export function groupOptionMistake(words: readonly string[]): string | undefined {
  const known = new Map<string, string>(GLOBAL_OPTIONS.flatMap((o) => o.flags.match(/-{1,2}[\w-]+/g)!.map((f) => [f, o.flags] as const)));
  for (const flag of [HELP_FLAG.flags, VERSION_FLAG.flags]) for (const f of flag.match(/-{1,2}[\w-]+/g)!) known.set(f, flag);
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--') break;
    if (!word.startsWith('-') || word === '-') continue;
    const eq = word.indexOf('=');
    // `-qv` is -q and -v.
    const flags = /^-[a-zA-Z]{2,}$/.test(word) ? [...word.slice(1)].map((c) => `-${c}`) : [eq === -1 ? word : word.slice(0, eq)];
    for (const flag of flags) {
      const spec = known.get(flag);
      if (spec === undefined) return `unknown option '${flag}'`;
      if (spec.includes('<') && eq === -1 && flags.length === 1) {
        if (i + 1 >= words.length) return `option '${spec}' argument missing`;
        i++;
      }
    }
  }
  return undefined;
}

/**
 * The nodes `words` (argv after the script) name, as commander dispatches them: options and the values of global
 * options are skipped, `help` is followed by the path of its topic, and the path ends at a command or at the
 * first word that names nothing.
 */
export function namedPath(tree: readonly TreeNode[], words: readonly string[]): TreeNode[] {
  const path: TreeNode[] = [];
  let level = tree;
  let help = false;
  for (let i = 0; i < words.length; i++) {
    const word = words[i]!;
    if (word === '--') break;
    if (word.startsWith('-')) {
      if (GLOBAL_VALUE_FLAGS.has(word)) i++;
      continue;
    }
    if (word === 'help' && !help && path.length === 0) {
      help = true;
      continue;
    }
    const node = level.find((n) => n.name === word);
    if (!node) break;
    path.push(node);
    if (node.kind === 'command') break;
    level = node.commands;
  }
  return path;
}

/**
 * The definitions `words` can need: the command they name, or the commands of the group they name (or of the
 * program), whose summaries its help lists. Every definition without words.
 */
async function loadFor(tree: readonly TreeNode[], words: readonly string[] | undefined): Promise<Map<CommandNode, CommandDef>> {
  const all = (nodes: readonly TreeNode[]): CommandNode[] => nodes.flatMap((n) => (n.kind === 'group' ? all(n.commands) : [n]));
  let wanted: CommandNode[];
  if (!words) {
    wanted = all(tree);
  } else {
    const last = namedPath(tree, words).at(-1);
    wanted = last?.kind === 'command' ? [last] : (last?.commands ?? tree).filter((n): n is CommandNode => n.kind === 'command');
  }
  return new Map(await Promise.all(wanted.map(async (node) => [node, await node.load()] as const)));
}

/** The program for `words` (argv after the script; undefined: every command loaded, for completion and tests). */
export async function createProgram(tree: readonly TreeNode[], io: IOStreams, runner: Runner, words?: readonly string[]): Promise<Command> {
  const loaded = await loadFor(tree, words);
  const program = new Command('gamehost');
  program
    .description(PROGRAM_SUMMARY)
    .version(version, VERSION_FLAG.flags, VERSION_FLAG.description)
    .helpOption(HELP_FLAG.flags, HELP_FLAG.description)
    .helpCommand(false);
  for (const spec of GLOBAL_OPTIONS) program.addOption(toOption(spec));
  program
    .showSuggestionAfterError(true)
    // Subcommand help lists the global options too, so each command's --help is complete on its own.
    .configureHelp({
      showGlobalOptions: true,
      // Choices and defaults written as the descriptions write theirs, `(default: 8)`, not JSON-quoted.
      optionDescription: (option) => {
        const extra = [
          option.argChoices && `choices: ${option.argChoices.join(', ')}`,
          option.defaultValue !== undefined && `default: ${String(option.defaultValue)}`,
        ].filter(Boolean);
        return extra.length ? `${option.description} (${extra.join('; ')})` : option.description;
      },
    })
    .addHelpText('after', PROGRAM_HELP_AFTER);

  const attach = (parent: Command, node: CommandNode, isDefault = false) => {
    const def = loaded.get(node);
    // Not needed by this invocation: commander still knows the name, for its suggestions.
    if (!def) return parent.command(node.name, { isDefault });
    const cmd = parent.command([node.name, ...def.operands].join(' '), { isDefault }).description(def.summary);
    for (const spec of def.options) cmd.addOption(toOption(spec));
    if (def.notes) cmd.addHelpText('after', `\n${def.notes}`);
    cmd.addHelpText('after', '\nExamples:\n' + def.examples.map((e) => `  $ ${e}`).join('\n') + '\n');
    cmd.action(async (...received: unknown[]) => {
      const command = received.at(-1) as Command;
      const operands = received.slice(0, def.operands.length) as (string | undefined)[];
      const globals = readGlobals(readValues([], GLOBAL_OPTIONS, [], command.optsWithGlobals()) as Parameters<typeof readGlobals>[0]);
      await runner(def, operands, command.opts(), globals);
    });
  };
  const addGroup = (parent: Command, def: GroupNode) => {
    const group = parent.command(def.name).description(def.summary).helpCommand(false);
    for (const node of def.commands) node.kind === 'group' ? addGroup(group, node) : attach(group, node, node.name === def.defaultCommand);
  };
  const add = (parent: Command, node: TreeNode) => (node.kind === 'group' ? addGroup(parent, node) : attach(parent, node));
  for (const node of tree) add(program, node);

  program
    .command(HELP_COMMAND.usage)
    .description(HELP_COMMAND.description)
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
      getOutHelpWidth: () => helpWidth(io.stdout),
      getErrHelpWidth: () => helpWidth(io.stderr),
    });
    cmd.commands.forEach(configure);
  };
  configure(program);
  return program;
}
