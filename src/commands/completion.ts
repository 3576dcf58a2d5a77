// `gamehost completion bash|zsh|fish`: a completion script generated from the command definitions themselves
// (through the commander tree built from them, as help is), so every command, option and choice the CLI knows is
// completed, and nothing it does not. The scripts are written by completion-scripts.ts, loaded only to run.
import type { Context } from '../context.js';
import { UsageError } from '../errors.js';
import { parseChoice } from './args.js';
import { defineCommand, type CommandDef, type TreeNode } from './command.js';
import type { Shell } from './completion-scripts.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const satisfies readonly Shell[];
const LOBBY_IDS = '__lobby-ids';

/**
 * The target's newest lobby ids, one a line, for a Tab: one attempt, within the call timeout the scripts pass
 * (--timeout 2), and nothing at all (exit 0) when the target cannot say, so a Tab never hangs nor prints an error.
 */
async function lobbyIds(ctx: Context): Promise<void> {
  try {
    const [{ listNamespaceLobbies }, { sanitizeLine }] = await Promise.all([import('../api/operations.js'), import('../output/sanitize.js')]);
    const { lobbies } = await listNamespaceLobbies(await ctx.api(), { attempts: 1 });
    const ids = (Array.isArray(lobbies) ? lobbies : []).map((l) => l?.lobby_id).filter((id): id is string => typeof id === 'string' && /^[0-9a-f-]{36}$/i.test(id));
    ctx.io.stdout.write(ids.map((id) => sanitizeLine(id) + '\n').join(''));
  } catch {
    // Nothing to offer.
  }
}

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
    // `__lobby-ids` is the scripts' own call, not a shell: the values where a lobby id goes.
    parse(v, ctx) {
      if (v.shell === LOBBY_IDS) return LOBBY_IDS;
      const shell = parseChoice('the shell', v.shell, SHELLS);
      // --json promises one JSON document on stdout, which a script for a shell is not.
      if (ctx.global.json) throw new UsageError('--json: completion prints a shell script, not JSON');
      return shell;
    },
    async run(ctx: Context, shell) {
      if (shell === LOBBY_IDS) return lobbyIds(ctx);
      const [{ createProgram }, { completionScript }] = await Promise.all([import('./program.js'), import('./completion-scripts.js')]);
      ctx.io.stdout.write(completionScript(shell, await createProgram(tree(), ctx.io, async () => {})));
    },
  });
}
