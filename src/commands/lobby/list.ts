// `gamehost lobby list`: the public lobbies that are running, as a game's lobby browser lists them.
import type { Context } from '../../context.js';
import { listLobbies } from '../../api/operations.js';
import { writeJsonText } from '../../output/json.js';
import { defineCommand } from '../command.js';

export interface ListOptions {
  state: boolean;
}

export default defineCommand({
  summary: 'List the public lobbies that are running',
  options: [{ flags: '--state', description: 'also show the state each lobby\'s server set' }],
  notes:
    'Players are the connected ones. The service leaves out a lobby with no connected player unless it is the only one of its game mode. ' +
    'Piped: tab-separated rows; with -q, the lobby ids alone.',
  examples: ['gamehost lobby list', 'gamehost lobby list --state', 'gamehost lobby list -q | head -1   # in CI'],
  parse(v): ListOptions {
    return { state: v.state === true };
  },
  run,
});

async function run(ctx: Context, o: ListOptions): Promise<void> {
  const { value, text } = await listLobbies(await ctx.api(), o.state);
  if (ctx.global.json) return writeJsonText(ctx, text);
  const { renderLobbyList } = await import('../../output/views/lobbies.js');
  if (ctx.global.quiet) return void ctx.io.stdout.write(value.lobbies.map((l) => `${l.lobby_id}\n`).join(''));
  ctx.io.stdout.write(renderLobbyList(ctx, value, o.state));
}
