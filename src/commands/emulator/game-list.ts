// `gamehost emulator game list`: the emulator's games, the seeded one first, with their expiry (no tokens).
import { listEmulatorGames } from '../../api/operations.js';
import type { EmulatorGame } from '../../api/types.js';
import type { Context } from '../../context.js';
import { writeJson } from '../../output/json.js';
import { defineCommand } from '../command.js';
import { DATA_DIR_OPTION, adminApi, emulatorPlace, type EmulatorPlace } from './local.js';

export interface GameListOptions {
  place: EmulatorPlace;
  wide: boolean;
}

export default defineCommand({
  summary: "List the emulator's games, the seeded one first",
  options: [DATA_DIR_OPTION, { flags: '--wide', description: 'every column at full width, none left out' }],
  notes: 'Sends GAMEHOST_EMULATOR_ADMIN_TOKEN when it is set. With -q, prints the game ids alone, one a line.',
  examples: [
    'gamehost emulator game list',
    'gamehost emulator game list --json | jq -r \'.games[] | select(.name == "nightly") | .game_id\'   # in CI',
  ],
  parse: (v, ctx): GameListOptions => ({ place: emulatorPlace(v.dataDir, ctx), wide: v.wide }),
  run,
});

async function run(ctx: Context, o: GameListOptions): Promise<void> {
  const api = await adminApi(ctx, o.place);
  // A data directory without a store holds the seeded game only, which is made when it is first used.
  const { games } = api ? await listEmulatorGames(api) : { games: [] };
  if (ctx.global.json) return writeJson(ctx, { games });
  const { sanitizeLine } = await import('../../output/sanitize.js');
  if (ctx.global.quiet) return void ctx.io.stdout.write(games.map((g) => sanitizeLine(g.game_id) + '\n').join(''));
  ctx.io.stdout.write(await renderGames(ctx, games, o.wide));
}

async function renderGames(ctx: Context, games: EmulatorGame[], wide: boolean): Promise<string> {
  const [{ formatTime }, { renderTable }] = await Promise.all([import('../../output/format.js'), import('../../output/table.js')]);
  const local = ctx.io.stdout.isTTY === true;
  const rows = games.map((g) => [
    g.game_id,
    g.namespace_id,
    g.seeded ? '(seeded)' : g.name,
    g.expire_ts === null ? 'never' : formatTime(g.expire_ts, { local }),
    g.game_modes.join(','),
    g.regions.map((r) => r.id).join(','),
  ]);
  // The game id is what the next command takes: never cut.
  const spec = { head: ['GAME', 'NAMESPACE', 'NAME', 'EXPIRES', 'GAME MODES', 'REGIONS'], rows, keep: [0], shrink: [2, 4, 5], drop: [5, 4, 1] };
  return renderTable(ctx, spec, ctx.io.stdout, wide);
}
