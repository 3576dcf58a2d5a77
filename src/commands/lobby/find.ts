// `gamehost lobby find`: what a game's client does to play: the fullest lobby with room (or a new one), once ready.
import type { Context } from '../../context.js';
import { findLobby } from '../../api/operations.js';
import type { FindLobbyRequest } from '../../api/types.js';
import { UsageError } from '../../errors.js';
import { integer, parseKeyValues } from '../args.js';
import { defineCommand } from '../command.js';
import { printSeat } from './join.js';

export interface FindOptions {
  body: FindLobbyRequest;
}

export default defineCommand({
  writes: true,
  summary: 'Find a lobby with room (or make one) and join it as a player',
  options: [
    { flags: '--game-mode <mode>', description: 'a game mode to look in (required); repeat for more, the first is used to create', repeatable: true },
    { flags: '--region <id>', description: 'a region to look in, e.g. lnd-atl; repeat for more (default: the closest)', repeatable: true },
    { flags: '--tag <key=value>', description: 'the lobby must have this tag; repeat for more', repeatable: true },
    { flags: '--no-create', description: 'never create a lobby: fail when none has room' },
    { flags: '--max-players <n>', description: 'player limit of a lobby this creates', value: integer({ min: 1 }) },
  ],
  notes:
    'Answers once the lobby is ready: the service holds the answer up to 50 s, and the CLI waits 60 s for it (--timeout to change). ' +
    'Prints the lobby, an address per port and the player token; with -q, the player token alone.',
  examples: [
    'gamehost lobby find --game-mode duos --region lnd-fra',
    'gamehost lobby find --game-mode default --game-mode duos --tag map=dust --no-create',
    'TOKEN=$(gamehost lobby find --game-mode squads -q)   # in CI',
  ],
  parse(v): FindOptions {
    const gameModes = (v.gameMode ?? []).filter((m) => m !== '');
    if (gameModes.length === 0) throw new UsageError('--game-mode is required', 'e.g. --game-mode default');
    const body: FindLobbyRequest = { game_modes: gameModes };
    if (v.region !== undefined) body.regions = v.region;
    if (v.tag !== undefined) body.tags = parseKeyValues('--tag', v.tag);
    if (v.create === false) body.prevent_auto_create_lobby = true;
    if (v.maxPlayers !== undefined) body.max_players = v.maxPlayers;
    return { body };
  },
  run,
});

async function run(ctx: Context, o: FindOptions): Promise<void> {
  await printSeat(ctx, await findLobby(await ctx.api(), o.body), 'Found');
}
