// A command declared once: its summary, operands, options (with types, defaults and choices), examples, `parse`
// (typed values in, the command's own options out, every check a one-line UsageError) and `run`. The values
// `parse` receives are typed from the declaration itself: rename `--game-mode` and `values.gameMode` stops
// compiling. src/cli.ts names each definition in the tree and loads it only when argv needs it (to run it, show
// its help, or list it); src/commands/program.ts builds commander's tree from them, completion.ts the scripts.
//
// Each module loaded costs start-up time, so a command file imports statically only small modules that import
// nothing heavy; `parse` and `run` import the rest (profiles, renderers, the HTTP client, SQLite, the emulator) when the
// command runs.
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';

/** An option as the user writes it; `flags` in commander's syntax: `-o, --output <file>`, `--no-resume`, `--watch [seconds]`. */
export interface OptionSpec {
  readonly flags: string;
  readonly description: string;
  /** The value when the option is not given, shown in help as `(default: "8")` and parsed like a given one. */
  readonly default?: string;
  /** The only values accepted: commander refuses others and lists these in help. */
  readonly choices?: readonly string[];
  /** Turns the text into its typed value, or throws a UsageError that names `flag`. */
  readonly value?: (raw: string, flag: string) => unknown;
  /** Given more than once, its values are collected into a list. */
  readonly repeatable?: true;
  /** The long name (no dashes) of an option it cannot go with. */
  readonly conflicts?: string;
}

// ---- the values a declaration yields, as types ------------------------------------------------------------

type LongName<F extends string> = F extends `${string}--${infer Rest}` ? (Rest extends `${infer Name} ${string}` ? Name : Rest) : never;
type CamelCase<S extends string> = S extends `${infer Head}-${infer Tail}` ? `${Head}${Capitalize<CamelCase<Tail>>}` : S;
/** The property commander stores an option under: `--game-mode` → gameMode, `--no-resume` → resume. */
type OptionKey<F extends string> = LongName<F> extends `no-${infer Name}` ? CamelCase<Name> : CamelCase<LongName<F>>;

type Text<O extends OptionSpec> = O extends { choices: readonly (infer C extends string)[] } ? C : string;
type Typed<O extends OptionSpec> = O extends { value: (raw: string, flag: string) => infer T } ? T : Text<O>;
type TakesValue<F extends string> = F extends `${string}<${string}>${string}` ? 'required' : F extends `${string}[${string}]${string}` ? 'optional' : 'none';
type OptionValue<O extends OptionSpec> =
  TakesValue<O['flags']> extends 'required'
    ? (O extends { repeatable: true } ? Typed<O>[] : Typed<O>) | (O extends { default: string } ? never : undefined)
    : TakesValue<O['flags']> extends 'optional'
      ? Typed<O> | true | undefined
      : boolean;

export type OptionValues<Os extends readonly OptionSpec[]> = { [O in Os[number] as OptionKey<O['flags']>]: OptionValue<O> };

type OperandKey<A extends string> = A extends `<${infer N}...>`
  ? CamelCase<N>
  : A extends `<${infer N}>`
    ? CamelCase<N>
    : A extends `[${infer N}]`
      ? CamelCase<N>
      : never;
/** `<id>` is a string, `[id]` one or none, `<id...>` one or more (the last operand). */
export type OperandValues<As extends readonly string[]> = {
  [A in As[number] as OperandKey<A>]: A extends `<${string}...>` ? string[] : A extends `<${string}>` ? string : string | undefined;
};

/** What `parse` receives: each operand and option by name, typed. */
export type Values<As extends readonly string[], Os extends readonly OptionSpec[]> = OperandValues<As> & OptionValues<Os>;

export interface CommandSpec<As extends readonly string[], Os extends readonly OptionSpec[], P> {
  summary: string;
  /** `<file>` (required), `[name]` (optional) or, last, `<id...>` (one or more), in order. */
  operands?: As;
  options?: Os;
  /** More help, printed before the examples. */
  notes?: string;
  /** Two or three, one of them for CI. */
  examples: string[];
  /** It changes what the service holds: in CI, an embedded emulator is used only when asked for by name. */
  writes?: true;
  /**
   * Values → the command's options; checks everything that can be checked before a request. May be async, to
   * import what it checks with only when the command runs.
   */
  parse(values: Values<As, Os>, ctx: Context): P;
  /** Does the work; a number is the exit code. */
  run(ctx: Context, options: Awaited<P>): Promise<number | void>;
}

/** A definition with its types erased, as the tree holds it. */
export interface CommandDef {
  readonly summary: string;
  readonly operands: readonly string[];
  readonly options: readonly OptionSpec[];
  readonly notes?: string;
  readonly examples: readonly string[];
  readonly writes?: true;
  parse(values: Record<string, unknown>, ctx: Context): unknown;
  run(ctx: Context, options: unknown): Promise<number | void>;
}

/** A command's place in the tree: its name, and how to load its definition. */
export interface CommandNode {
  readonly kind: 'command';
  readonly name: string;
  load(): Promise<CommandDef>;
}

export interface GroupNode {
  readonly kind: 'group';
  readonly name: string;
  readonly summary: string;
  /** Groups nest: `emulator lobby stop`. */
  readonly commands: readonly TreeNode[];
  /** The command run when the group is named alone; without one, the group alone shows its help. */
  readonly defaultCommand?: string;
}

export type TreeNode = CommandNode | GroupNode;

export function defineCommand<const As extends readonly string[] = [], const Os extends readonly OptionSpec[] = [], P = unknown>(
  spec: CommandSpec<As, Os, P>,
): CommandDef {
  const { operands = [], options = [], ...rest } = spec;
  return {
    ...rest,
    operands,
    options,
    parse: (values, ctx) => spec.parse(values as Values<As, Os>, ctx),
    run: (ctx, options) => spec.run(ctx, options as Awaited<P>),
  };
}

/** `defaultCommand`: the command the group runs when named alone (`emulator builds` lists). */
export function group(name: string, summary: string, commands: readonly TreeNode[], defaultCommand?: string): GroupNode {
  return { kind: 'group', name, summary, commands, defaultCommand };
}

/** `command('push', () => import('./commands/build/push.js'))`: loaded once, when first needed. */
export function command(name: string, load: () => Promise<{ default: CommandDef } | CommandDef>): CommandNode {
  let loaded: Promise<CommandDef> | undefined;
  return {
    kind: 'command',
    name,
    load: () => (loaded ??= load().then((m) => ('default' in m ? m.default : m))),
  };
}

// ---- the values a declaration yields, at run time ----------------------------------------------------------

/** `--limit-rate` of `--limit-rate <rate>`, `--output` of `-o, --output <file>`. */
export function longFlag(spec: OptionSpec): string {
  return /--[\w-]+/.exec(spec.flags)![0];
}

/** The key commander stores the option under (see OptionKey). */
export function optionKey(spec: OptionSpec): string {
  return camelCase(longFlag(spec).slice(2).replace(/^no-/, ''));
}

export function takesValue(spec: OptionSpec): 'required' | 'optional' | 'none' {
  return /<[^>]*>/.test(spec.flags) ? 'required' : /\[[^\]]*\]/.test(spec.flags) ? 'optional' : 'none';
}

export function operandName(operand: string): string {
  return operand.slice(1, -1).replace(/\.\.\.$/, '');
}

const camelCase = (s: string) => s.replace(/-(\w)/g, (_, c: string) => c.toUpperCase());

/**
 * The values of one invocation: operands by name, options converted by their `value` (defaults too), flags as
 * booleans. `opts` is what commander parsed.
 */
export function readValues(
  operands: readonly string[],
  options: readonly OptionSpec[],
  given: readonly (string | undefined)[],
  opts: Record<string, unknown>,
): Record<string, unknown> {
  const values: Record<string, unknown> = {};
  operands.forEach((operand, i) => (values[camelCase(operandName(operand))] = given[i]));
  for (const spec of options) {
    const key = optionKey(spec);
    const raw = opts[key];
    const convert = (text: string) => (spec.value ? spec.value(text, longFlag(spec)) : text);
    if (takesValue(spec) === 'none') {
      const negated = spec.flags.includes('--no-');
      // `--no-profile` beside `--profile <name>`: the same key, false only when the negation was given.
      if (key in values) {
        // An operand and its negation (`deploy prod --no-namespace`): commander keeps one; neither is dropped silently.
        if (negated && raw === false && typeof values[key] === 'string') throw new UsageError(`${longFlag(spec)} and "${values[key] as string}" cannot go together: give one`);
        if (negated && raw === false) values[key] = false;
      } else {
        values[key] = negated ? raw !== false : raw === true;
      }
    } else if (typeof raw === 'string') {
      values[key] = convert(raw);
    } else if (Array.isArray(raw)) {
      values[key] = raw.map((r) => convert(String(r)));
    } else {
      values[key] = raw;
    }
  }
  return values;
}
