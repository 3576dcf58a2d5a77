// `gamehost completion bash|zsh|fish`: a completion script generated from the command definitions themselves
// (through the commander tree built from them, as help is), so every command, option and choice the CLI knows is
// completed, and nothing it does not. The scripts are written by completion-scripts.ts, loaded only to run.
import type { Context } from '../context.js';
import { parseChoice } from './args.js';
import { defineCommand, type CommandDef, type TreeNode } from './command.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

/** The completion command for `tree`, which holds the command itself: hence a function returning the tree. */
export function completionCommand(tree: () => readonly TreeNode[]): CommandDef {
  return defineCommand({
    operands: ['<shell>'],
    summary: 'Print a shell completion script: bash, zsh or fish',
    examples: [
      'gamehost completion bash > ~/.local/share/bash-completion/completions/gamehost',
      'gamehost completion zsh > "${fpath[1]}/_gamehost"; gamehost completion fish > ~/.config/fish/completions/gamehost.fish',
      'gamehost completion bash | bash -n   # in CI: the script parses',
    ],
    parse: (v) => parseChoice('the shell', v.shell, SHELLS),
    async run(ctx: Context, shell) {
      const [{ createProgram }, { completionScript }] = await Promise.all([import('./program.js'), import('./completion-scripts.js')]);
      ctx.io.stdout.write(completionScript(shell, await createProgram(tree(), ctx.io, async () => {})));
    },
  });
}
