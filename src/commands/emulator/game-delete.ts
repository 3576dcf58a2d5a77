// `gamehost emulator game delete <game-id>`: a game and everything it holds, records and bytes; its tokens stop working.
import { deleteEmulatorGame } from '../../api/operations.js';
import type { Context } from '../../context.js';
import { ApiError } from '../../errors.js';
import { formatCount } from '../../output/format.js';
import { writeJson } from '../../output/json.js';
import { parseUuid } from '../args.js';
import { defineCommand } from '../command.js';
import { DATA_DIR_OPTION, adminApi, emulatorPlace, type EmulatorPlace } from './local.js';

export interface GameDeleteOptions {
  gameId: string;
  place: EmulatorPlace;
}

export default defineCommand({
  operands: ['<game-id>'],
  summary: 'Delete a game with its lobbies, builds and exports; its tokens stop working',
  options: [DATA_DIR_OPTION],
  notes: 'Sends GAMEHOST_EMULATOR_ADMIN_TOKEN when it is set. An unknown or already deleted game exits 4. With -q, prints nothing.',
  examples: [
    'gamehost emulator game delete "$GAMEHOST_GAME"',
    'gamehost emulator game delete "$GAMEHOST_GAME" --json   # in CI, in a step that always runs',
  ],
  parse: (v, ctx): GameDeleteOptions => ({ gameId: parseUuid('the game id', v.gameId), place: emulatorPlace(v.dataDir, ctx) }),
  run,
});

async function run(ctx: Context, o: GameDeleteOptions): Promise<void> {
  const api = await adminApi(ctx, o.place);
  if (!api) throw new ApiError(404, { code: 'API_NOT_FOUND', message: `Game ${o.gameId} not found.` });
  const answer = await deleteEmulatorGame(api, o.gameId).catch((err) => {
    // The seeded game is refused with 403, and no token or login changes that.
    if (err instanceof ApiError && err.status === 403 && err.code === 'API_FORBIDDEN' && /seeded game/.test(err.message)) {
      err.hint = 'the seeded game cannot be deleted; games made with `gamehost emulator game create` can';
    }
    throw err;
  });
  if (ctx.global.json) return writeJson(ctx, answer);
  const { deleted: d } = answer;
  ctx.info(`Deleted game ${o.gameId}: ${count(d.lobbies, 'lobby', 'lobbies')}, ${count(d.players, 'player')}, ${count(d.builds, 'build')}, ${count(d.exports, 'export')}.`);
}

/** `1 lobby`, `2 lobbies`. */
function count(n: number, one: string, many = `${one}s`): string {
  return `${formatCount(n)} ${n === 1 ? one : many}`;
}
