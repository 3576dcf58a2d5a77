// The completion scripts for bash, zsh and fish, written from the commander tree that the command definitions
// build (see completion.ts).
import type { Command, Option } from 'commander';
import { SHELLS, type Shell } from './completion.js';

/** What may follow an option or stand as an operand. */
type Value = { kind: 'choices'; choices: string[] } | { kind: 'files' } | { kind: 'profiles' } | { kind: 'lobbies' } | { kind: 'text' };

interface OptionSpec {
  short?: string;
  long?: string;
  description: string;
  value?: Value;
}

interface CommandSpec {
  /** Words after `gamehost`, space-separated; '' for the program itself. */
  path: string;
  description: string;
  options: OptionSpec[];
  subcommands: CommandSpec[];
  operand?: Value;
}

const HELP: OptionSpec = { short: '-h', long: '--help', description: 'show help' };

function valueOf(placeholder: string, choices?: readonly string[]): Value {
  if (choices?.length) return { kind: 'choices', choices: [...choices] };
  if (/file|dir|image/i.test(placeholder)) return { kind: 'files' };
  return { kind: 'text' };
}

function optionSpec(o: Option): OptionSpec {
  // An optional value (`--watch [seconds]`) is never completed as one: what follows is completed as if the option
  // took none (a lobby id after `lobby logs --watch`), and a number typed there is no command word anyway.
  const takes = o.required;
  const placeholder = /[<[]([^>\]]+)[>\]]/.exec(o.flags)?.[1] ?? '';
  return {
    short: o.short,
    long: o.long,
    description: o.description,
    value: !takes ? undefined : o.long === '--profile' ? { kind: 'profiles' } : valueOf(placeholder, o.argChoices),
  };
}

/** Operands named in the tree: a file, a shell, a profile name, a help topic. */
function operandOf(cmd: Command, topLevel: string[]): Value | undefined {
  const arg = cmd.registeredArguments[0];
  if (!arg) return undefined;
  const name = arg.name();
  if (arg.argChoices?.length) return { kind: 'choices', choices: [...arg.argChoices] };
  if (name === 'shell') return { kind: 'choices', choices: [...SHELLS] };
  if (name === 'name') return { kind: 'profiles' };
  // Every command whose operand is a lobby id (`lobby logs`, `lobby stop`, `emulator lobby stop`, and any added
  // later) offers the target's lobby ids.
  if (name === 'lobby-id') return { kind: 'lobbies' };
  if (name === 'topic') return { kind: 'choices', choices: [...topLevel, 'exit-codes'] };
  return valueOf(name);
}

function describeTree(program: Command): { root: CommandSpec; globals: OptionSpec[] } {
  const topLevel = program.commands.map((c) => c.name());
  const walk = (cmd: Command, path: string): CommandSpec => ({
    path,
    description: cmd.description(),
    // The program's own options are the globals, offered everywhere (with --help).
    options: path === '' ? [] : cmd.options.map(optionSpec),
    subcommands: cmd.commands.map((c) => walk(c, path ? `${path} ${c.name()}` : c.name())),
    operand: cmd.commands.length ? undefined : operandOf(cmd, topLevel),
  });
  return { root: walk(program, ''), globals: [...program.options.map(optionSpec), HELP] };
}

function all(root: CommandSpec): CommandSpec[] {
  return [root, ...root.subcommands.flatMap(all)];
}

const names = (o: OptionSpec) => [o.short, o.long].filter((n): n is string => !!n);

/** Every option that takes a value, anywhere: its value is skipped when finding the command path. */
function valueOptions(root: CommandSpec, globals: OptionSpec[]): string[] {
  const set = new Set<string>();
  for (const o of [...globals, ...all(root).flatMap((c) => c.options)]) if (o.value) names(o).forEach((n) => set.add(n));
  return [...set].sort();
}

const PROFILES_CMD = 'gamehost profile list 2>/dev/null | cut -f1';
/** The target's newest lobby ids; bounded: one attempt of at most 2 s (see completion.ts), nothing on failure. */
export const LOBBY_IDS_CMD = 'gamehost --timeout 2 completion __lobby-ids 2>/dev/null';

// ---- bash -------------------------------------------------------------------------------------------------

const shq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

function bashValue(v: Value): string {
  switch (v.kind) {
    case 'choices':
      return `COMPREPLY=($(compgen -W ${shq(v.choices.join(' '))} -- "$cur"))`;
    case 'profiles':
      return `COMPREPLY=($(compgen -W "$(${PROFILES_CMD})" -- "$cur"))`;
    case 'lobbies':
      return `COMPREPLY=($(compgen -W "$(${LOBBY_IDS_CMD})" -- "$cur"))`;
    case 'files':
      // File names only where the tree says a file goes (marked as such, so bash appends / to a directory).
      return `compopt -o filenames 2>/dev/null; COMPREPLY=($(compgen -f -- "$cur"))`;
    case 'text':
      return 'COMPREPLY=()';
  }
}

function bash(root: CommandSpec, globals: OptionSpec[]): string {
  const commands = all(root);
  const paths = commands.filter((c) => c.path).map((c) => shq(c.path));
  const globalWords = globals.flatMap(names).join(' ');
  const lines: string[] = [
    '# bash completion for gamehost, generated by `gamehost completion bash` from its command tree.',
    '# Install: gamehost completion bash > ~/.local/share/bash-completion/completions/gamehost',
    '# or add to ~/.bashrc: source <(gamehost completion bash)',
    '_gamehost() {',
    '  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}',
    '  local cmd_path="" word i skip=0',
    '  for ((i = 1; i < COMP_CWORD; i++)); do',
    '    word=${COMP_WORDS[i]}',
    '    if ((skip)); then skip=0; continue; fi',
    '    case "$word" in',
    `      ${valueOptions(root, globals).join('|')}) skip=1; continue ;;`,
    '      -*) continue ;;',
    '    esac',
    '    case "${cmd_path:+$cmd_path }$word" in',
    `      ${paths.join('|')}) cmd_path="\${cmd_path:+$cmd_path }$word" ;;`,
    '    esac',
    '  done',
    '  case "$cmd_path:$prev" in',
  ];
  for (const o of globals) if (o.value) lines.push(`    *:${names(o).join('|*:')}) ${bashValue(o.value)}; return ;;`);
  for (const c of commands) {
    for (const o of c.options) {
      if (o.value) lines.push(`    ${names(o).map((n) => shq(`${c.path}:${n}`)).join('|')}) ${bashValue(o.value)}; return ;;`);
    }
  }
  lines.push('  esac', '  if [[ $cur == -* ]]; then', '    case "$cmd_path" in');
  for (const c of commands) {
    const words = [...c.options.flatMap(names)].join(' ');
    lines.push(`      ${shq(c.path)}) COMPREPLY=($(compgen -W ${shq(`${words} ${globalWords}`.trim())} -- "$cur")) ;;`);
  }
  lines.push('    esac', '    return', '  fi', '  case "$cmd_path" in');
  for (const c of commands) {
    if (c.subcommands.length) {
      lines.push(`    ${shq(c.path)}) COMPREPLY=($(compgen -W ${shq(c.subcommands.map((s) => s.path.split(' ').at(-1)).join(' '))} -- "$cur")) ;;`);
    } else if (c.operand) {
      lines.push(`    ${shq(c.path)}) ${bashValue(c.operand)} ;;`);
    }
  }
  // No `-o default`: with it, bash offers file names wherever the function offers nothing (a lobby id with no lobby).
  lines.push('  esac', '}', 'complete -F _gamehost gamehost', '');
  return lines.join('\n');
}

// ---- zsh --------------------------------------------------------------------------------------------------

// zsh's _describe splits "name:description" at the first colon, so colons in names are escaped.
const zdesc = (name: string, description: string) => shq(`${name.replace(/:/g, '\\:')}:${description}`);

function zshValue(v: Value): string {
  switch (v.kind) {
    case 'choices':
      return `compadd -- ${v.choices.map(shq).join(' ')}`;
    case 'profiles':
      return `compadd -- \${(f)"$(${PROFILES_CMD})"}`;
    case 'lobbies':
      return `compadd -- \${(f)"$(${LOBBY_IDS_CMD})"}`;
    case 'files':
      return '_files';
    case 'text':
      return ':';
  }
}

function zsh(root: CommandSpec, globals: OptionSpec[]): string {
  const commands = all(root);
  const optionEntries = (opts: OptionSpec[]) => opts.flatMap((o) => names(o).map((n) => zdesc(n, o.description)));
  const lines: string[] = [
    '#compdef gamehost',
    '# zsh completion for gamehost, generated by `gamehost completion zsh` from its command tree.',
    '# Install: gamehost completion zsh > "${fpath[1]}/_gamehost"   (or: source <(gamehost completion zsh))',
    '_gamehost() {',
    '  local cmd_path="" word i skip=0',
    '  for ((i = 2; i < CURRENT; i++)); do',
    '    word=${words[i]}',
    '    if (( skip )); then skip=0; continue; fi',
    '    case $word in',
    `      (${valueOptions(root, globals).join('|')}) skip=1; continue ;;`,
    '      (-*) continue ;;',
    '    esac',
    '    case "${cmd_path:+$cmd_path }$word" in',
    `      (${commands.filter((c) => c.path).map((c) => shq(c.path)).join('|')}) cmd_path="\${cmd_path:+$cmd_path }$word" ;;`,
    '    esac',
    '  done',
    '  local cur=${words[CURRENT]} prev=${words[CURRENT-1]}',
    '  case "$cmd_path:$prev" in',
  ];
  for (const o of globals) if (o.value) lines.push(`    (*:${names(o).join('|*:')}) ${zshValue(o.value)}; return ;;`);
  for (const c of commands) {
    for (const o of c.options) {
      if (o.value) lines.push(`    (${names(o).map((n) => shq(`${c.path}:${n}`)).join('|')}) ${zshValue(o.value)}; return ;;`);
    }
  }
  lines.push('  esac', '  local -a opts subs', `  opts=(${optionEntries(globals).join(' ')})`, '  case $cmd_path in');
  for (const c of commands) {
    const subs = c.subcommands.map((s) => zdesc(s.path.split(' ').at(-1)!, s.description));
    const body = [c.options.length ? `opts+=(${optionEntries(c.options).join(' ')})` : '', subs.length ? `subs=(${subs.join(' ')})` : ''].filter(Boolean);
    if (body.length) lines.push(`    (${shq(c.path)}) ${body.join('; ')} ;;`);
  }
  lines.push(
    '  esac',
    '  if [[ $cur == -* ]]; then',
    "    _describe -t options 'option' opts",
    '  elif (( ${#subs} )); then',
    "    _describe -t commands 'command' subs",
    '  else',
    '    case $cmd_path in',
  );
  for (const c of commands) if (!c.subcommands.length && c.operand) lines.push(`      (${shq(c.path)}) ${zshValue(c.operand)} ;;`);
  lines.push(
    '    esac',
    '  fi',
    '}',
    // Loaded from $fpath the file is the function's body; sourced, it registers the function.
    'if [ "$funcstack[1]" = "_gamehost" ]; then',
    '  _gamehost "$@"',
    'else',
    '  compdef _gamehost gamehost',
    'fi',
    '',
  );
  return lines.join('\n');
}

// ---- fish -------------------------------------------------------------------------------------------------

const fq = (s: string) => `'${s.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;

function fishValue(v: Value): string {
  switch (v.kind) {
    case 'choices':
      return `-x -a ${fq(v.choices.join(' '))}`;
    case 'profiles':
      return `-x -a ${fq(`(${PROFILES_CMD})`)}`;
    case 'lobbies':
      return `-x -a ${fq(`(${LOBBY_IDS_CMD})`)}`;
    case 'files':
      return '-r -F';
    case 'text':
      return '-x';
  }
}

function fishOption(o: OptionSpec, condition?: string): string {
  const parts = ['complete -c gamehost'];
  if (condition !== undefined) parts.push(`-n ${fq(`__gamehost_at ${fq(condition)}`)}`);
  if (o.short) parts.push(`-s ${o.short.slice(1)}`);
  if (o.long) parts.push(`-l ${o.long.slice(2)}`);
  if (o.value) parts.push(fishValue(o.value));
  parts.push(`-d ${fq(o.description)}`);
  return parts.join(' ');
}

function fish(root: CommandSpec, globals: OptionSpec[]): string {
  const commands = all(root);
  const lines: string[] = [
    '# fish completion for gamehost, generated by `gamehost completion fish` from its command tree.',
    '# Install: gamehost completion fish > ~/.config/fish/completions/gamehost.fish',
    'function __gamehost_path',
    '    set -l tokens (commandline -opc)',
    '    set -l cmd_path',
    '    set -l skip 0',
    '    for word in $tokens[2..-1]',
    '        if test $skip = 1',
    '            set skip 0',
    '            continue',
    '        end',
    '        switch $word',
    `            case ${valueOptions(root, globals).join(' ')}`,
    '                set skip 1',
    '                continue',
    "            case '-*'",
    '                continue',
    '        end',
    `        if contains -- (string join ' ' $cmd_path $word) ${commands.filter((c) => c.path).map((c) => fq(c.path)).join(' ')}`,
    '            set cmd_path $cmd_path $word',
    '        end',
    '    end',
    "    string join ' ' $cmd_path",
    'end',
    'function __gamehost_at',
    '    set -l here (__gamehost_path)',
    '    test "$here" = "$argv[1]"',
    'end',
    // Files only where the tree says a value is a file.
    'complete -c gamehost -f',
  ];
  for (const o of globals) lines.push(fishOption(o));
  for (const c of commands) {
    for (const s of c.subcommands) {
      lines.push(`complete -c gamehost -n ${fq(`__gamehost_at ${fq(c.path)}`)} -a ${fq(s.path.split(' ').at(-1)!)} -d ${fq(s.description)}`);
    }
    for (const o of c.options) lines.push(fishOption(o, c.path));
    if (!c.subcommands.length && c.operand) {
      const v = c.operand;
      const what = v.kind === 'files' ? '-F' : v.kind === 'text' ? '' : `-a ${fishValue(v).replace(/^-x -a /, '')}`;
      if (what) lines.push(`complete -c gamehost -n ${fq(`__gamehost_at ${fq(c.path)}`)} ${what}`);
    }
  }
  lines.push('');
  return lines.join('\n');
}

const GENERATORS: Record<Shell, (root: CommandSpec, globals: OptionSpec[]) => string> = { bash, zsh, fish };

export function completionScript(shell: Shell, program: Command): string {
  const { root, globals } = describeTree(program);
  return GENERATORS[shell](root, globals);
}
