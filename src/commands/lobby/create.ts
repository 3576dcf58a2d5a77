import type { Context } from '../../context.js';
import { createLobby } from '../../api/operations.js';
import type { CreateLobbyRequest } from '../../api/types.js';
import { UsageError } from '../../errors.js';
import { writeJsonText } from '../../output/json.js';
import { renderCreatedLobby } from '../../output/views/lobby.js';
import { sanitizeLine } from '../../output/sanitize.js';
import { parseInteger, parseJsonArg, parseKeyValues } from '../args.js';

// The service's tag limits, checked here so a bad tag costs no request.
const MAX_TAGS = 8;
const MAX_TAG_NAME = 128;
const MAX_TAG_VALUE = 512;

export interface CreateOptions {
  body: CreateLobbyRequest;
}

export function parse(_args: string[], opts: Record<string, unknown>, ctx: Context): CreateOptions {
  const gameMode = opts.gameMode as string | undefined;
  if (!gameMode) throw new UsageError('--game-mode is required', 'e.g. --game-mode default');
  const body: CreateLobbyRequest = { game_mode: gameMode };
  if (opts.region !== undefined) body.region = String(opts.region);
  if (opts.maxPlayers !== undefined) body.max_players = parseInteger('--max-players', opts.maxPlayers, { min: 1 });
  if (opts.publicity !== undefined) body.publicity = opts.publicity as 'public' | 'private';
  if (opts.tag !== undefined) {
    const tags = parseKeyValues('--tag', opts.tag as string[]);
    const names = Object.keys(tags);
    if (names.length > MAX_TAGS) throw new UsageError(`--tag: at most ${MAX_TAGS} tags, not ${names.length}`);
    for (const [k, v] of Object.entries(tags)) {
      if (k.length > MAX_TAG_NAME) throw new UsageError(`--tag: a tag name is at most ${MAX_TAG_NAME} characters ("${k.slice(0, 20)}…")`);
      if (v.length > MAX_TAG_VALUE) throw new UsageError(`--tag ${k}: a tag value is at most ${MAX_TAG_VALUE} characters`);
    }
    body.tags = tags;
  }
  if (opts.config !== undefined) body.lobby_config = parseJsonArg('--config', String(opts.config), ctx.cwd);
  if (opts.verification !== undefined) {
    body.verification_data = parseJsonArg('--verification', String(opts.verification), ctx.cwd);
  }
  if (opts.hcaptcha !== undefined) body.captcha = { hcaptcha: { client_response: String(opts.hcaptcha) } };
  if (opts.turnstile !== undefined) body.captcha = { turnstile: { client_response: String(opts.turnstile) } };
  return { body };
}

export async function run(ctx: Context, options: CreateOptions): Promise<void> {
  const { value, text } = await createLobby(await ctx.api(), options.body);
  if (ctx.global.json) return writeJsonText(ctx, text);
  // -q: the lobby id alone, for `LOBBY=$(gamehost lobby create -q …)`.
  if (ctx.global.quiet) return void ctx.io.stdout.write(sanitizeLine(value.lobby.lobby_id) + '\n');
  ctx.io.stdout.write(renderCreatedLobby(ctx, value));
}
