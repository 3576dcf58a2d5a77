// `gamehost lobby join <lobby-id>`: a player for one lobby, as a game's client joins a friend's lobby.
import type { Context } from '../../context.js';
import { joinLobby, type Answer } from '../../api/operations.js';
import type { JoinLobbyResponse } from '../../api/types.js';
import { writeJsonText } from '../../output/json.js';
import { sanitizeLine } from '../../output/sanitize.js';
import { parseLobbyId } from '../args.js';
import { defineCommand } from '../command.js';

export interface JoinOptions {
  lobbyId: string;
}

export default defineCommand({
  writes: true,
  operands: ['<lobby-id>'],
  summary: 'Join a lobby by id as a player',
  options: [],
  notes:
    'Answers once the lobby is ready: the service holds the answer up to 50 s, and the CLI waits 60 s for it (--timeout to change); an unknown lobby is exit 4. ' +
    'Prints the lobby, an address per port and the player token; with -q, the player token alone; --json, the service\'s answer.',
  examples: [
    'gamehost lobby join "$LOBBY"',
    'gamehost lobby join "$LOBBY" --json | jq -r .ports.default.host',
    'TOKEN=$(gamehost lobby join "$LOBBY" -q)   # in CI',
  ],
  parse(v): JoinOptions {
    return { lobbyId: parseLobbyId(v.lobbyId) };
  },
  run,
});

async function run(ctx: Context, o: JoinOptions): Promise<void> {
  await printSeat(ctx, await joinLobby(await ctx.api(), o.lobbyId), 'Joined');
}

/** The answer of find or join: --json the service's text, -q the player token alone, else the lobby view. */
export async function printSeat(ctx: Context, { value, text }: Answer<JoinLobbyResponse>, verb: string): Promise<void> {
  if (ctx.global.json) return writeJsonText(ctx, text);
  if (ctx.global.quiet) return void ctx.io.stdout.write(sanitizeLine(value.player.token) + '\n');
  const { renderCreatedLobby } = await import('../../output/views/lobby.js');
  ctx.io.stdout.write(renderCreatedLobby(ctx, value, verb));
}
