// `gamehost emulator game create`: a game of its own for one CI job, with its tokens and an expiry.
import { createEmulatorGame } from '../../api/operations.js';
import type { EmulatorCreateGameRequest, EmulatorCreatedGame } from '../../api/types.js';
import type { Context } from '../../context.js';
import { UsageError } from '../../errors.js';
import { writeJson } from '../../output/json.js';
import { defineCommand } from '../command.js';
import { DATA_DIR_OPTION, emulatorPlace, exportLines, gameVariables, type EmulatorPlace } from './local.js';

const MAX_TTL_MS = 30 * 24 * 60 * 60 * 1000;

export interface GameCreateOptions {
  body: EmulatorCreateGameRequest;
  place: EmulatorPlace;
  /** Print `export GAMEHOST_…=…` lines (in GitHub Actions: write them to $GITHUB_ENV, the tokens masked). */
  env: boolean;
}

export default defineCommand({
  summary: 'Create a game of its own for one CI job, with its tokens',
  options: [
    { flags: '--ttl <duration>', description: 'how long the game lives, e.g. 6h, at most 30d (default: 24h)' },
    { flags: '--game-mode <mode>', description: 'a game mode of the game; repeat for more (default: the configured ones)', repeatable: true },
    { flags: '--region <id>', description: 'a region of the game; repeat for more (default: the configured ones)', repeatable: true },
    { flags: '--name <label>', description: 'a label to know the game by in `emulator game list`' },
    { flags: '--env', description: 'print export GAMEHOST_…=… lines; in GitHub Actions, set them in $GITHUB_ENV instead' },
    DATA_DIR_OPTION,
  ],
  notes:
    'Sends GAMEHOST_EMULATOR_ADMIN_TOKEN when it is set. With -q, prints the game id alone. The game, and every ' +
    'lobby, build and export it holds, is deleted when it expires or by `gamehost emulator game delete`.',
  examples: [
    'eval "$(gamehost emulator game create --ttl 6h --env)"',
    'gamehost emulator game create --ttl 2h --name "$GITHUB_RUN_ID" --env   # in CI; GitHub Actions: into $GITHUB_ENV',
    'gamehost emulator game create --game-mode ctf --region lnd-fra --json | jq -r .tokens.cloud',
  ],
  async parse(v, ctx): Promise<GameCreateOptions> {
    if (v.env && ctx.global.json) throw new UsageError('give either --env or --json, not both');
    const body: EmulatorCreateGameRequest = {};
    if (v.ttl !== undefined) {
      const { parseDuration } = await import('../../timeparse.js');
      const ttl = parseDuration('--ttl', v.ttl);
      if (ttl < 1000 || ttl > MAX_TTL_MS) throw new UsageError(`--ttl must be from 1s to 30d, not ${v.ttl}`);
      body.ttl_seconds = Math.round(ttl / 1000);
    }
    if (v.gameMode !== undefined) body.game_modes = v.gameMode;
    if (v.region !== undefined) body.regions = v.region;
    if (v.name !== undefined) body.name = v.name;
    return { body, place: emulatorPlace(v.dataDir, ctx), env: v.env };
  },
  run,
});

async function run(ctx: Context, o: GameCreateOptions): Promise<void> {
  // A data directory gets its store made if it has none: a game is something to create, not to look up.
  const api = o.place.kind === 'endpoint' ? await ctx.api() : await ctx.emulatorApi(o.place.dir);
  const game = await createEmulatorGame(api, o.body);
  // The endpoint only means something for a server that outlives this command.
  const endpoint = o.place.kind === 'endpoint' ? api.target.endpoint : undefined;
  const githubActions = ctx.env.GITHUB_ACTIONS === 'true';
  if (ctx.global.json) return writeJson(ctx, endpoint === undefined ? game : { endpoint, ...game });
  // -q: the game id alone (no token shown, so nothing to mask either).
  if (ctx.global.quiet && !o.env) return void ctx.io.stdout.write(game.game_id + '\n');
  // In a GitHub Actions log, tokens are masked before any line can show them (the runner reads stdout in order).
  if (githubActions) ctx.io.stdout.write([game.tokens.cloud, game.tokens.public, game.tokens.dev].map((t) => `::add-mask::${t}\n`).join(''));
  if (o.env) {
    const vars = gameVariables({ ...game, endpoint });
    if (githubActions && ctx.env.GITHUB_ENV) return appendGithubEnv(ctx, ctx.env.GITHUB_ENV, vars, game);
    ctx.io.stdout.write(exportLines(vars));
    return;
  }
  ctx.io.stdout.write(await renderGame(ctx, game, endpoint));
  ctx.info(`\nDelete it with \`gamehost emulator game delete ${game.game_id}\`; --env prints these as export lines for your shell.`);
}

/** The variables for the job's next steps: `NAME=value` lines in the file GitHub Actions reads after the step. */
async function appendGithubEnv(ctx: Context, file: string, vars: [string, string][], game: EmulatorCreatedGame): Promise<void> {
  const { appendFileSync } = await import('node:fs');
  const { describeFsError } = await import('../../errors.js');
  // Ids, tokens and URLs never hold a line break; anything that did could set other variables.
  if (vars.some(([, v]) => /[\r\n]/.test(v))) throw new UsageError('a value holds a line break; refusing to write it to $GITHUB_ENV');
  try {
    appendFileSync(file, vars.map(([k, v]) => `${k}=${v}\n`).join(''));
  } catch (err) {
    // The game exists: say which, so the job can still delete it.
    throw new UsageError(`cannot write to $GITHUB_ENV (${file}): ${describeFsError(err)}; game ${game.game_id} was created`);
  }
  ctx.info(`Game ${game.game_id} created; ${vars.map(([k]) => k).join(', ')} set for the next steps (tokens masked).`);
}

async function renderGame(ctx: Context, game: EmulatorCreatedGame, endpoint: string | undefined): Promise<string> {
  const [{ renderRecord }, { formatTime }] = await Promise.all([import('../../output/record.js'), import('../../output/format.js')]);
  const local = ctx.io.stdout.isTTY === true;
  return renderRecord(ctx, [
    ...(endpoint === undefined ? [] : [{ label: 'Endpoint', key: 'endpoint', value: endpoint }]),
    { label: 'Game', key: 'game_id', value: game.game_id },
    { label: 'Namespace', key: 'namespace_id', value: game.namespace_id },
    ...(game.name ? [{ label: 'Name', key: 'name', value: game.name, whole: false }] : []),
    { label: 'Game modes', key: 'game_modes', value: game.game_modes.join(','), whole: false },
    { label: 'Regions', key: 'regions', value: game.regions.map((r) => r.id).join(','), whole: false },
    { label: 'Expires', key: 'expire_ts', value: game.expire_ts === null ? 'never' : formatTime(game.expire_ts, { local }) },
    { label: 'Cloud token', key: 'cloud_token', value: game.tokens.cloud },
    { label: 'Public token', key: 'public_token', value: game.tokens.public },
    { label: 'Dev token', key: 'dev_token', value: game.tokens.dev },
  ]);
}
