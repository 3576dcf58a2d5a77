import fs from 'node:fs';
import path from 'node:path';
import type { Context } from '../../context.js';
import { createLobby } from '../../api/operations.js';
import type { CreateLobbyRequest } from '../../api/types.js';
import { UsageError, describeFsError } from '../../errors.js';
import { writeJsonText } from '../../output/json.js';
import { sanitizeLine } from '../../output/sanitize.js';
import { integer, parseKeyValues } from '../args.js';
import { defineCommand } from '../command.js';

// The service's tag limits, checked here so a bad tag costs no request.
const MAX_TAGS = 8;
const MAX_TAG_NAME = 128;
const MAX_TAG_VALUE = 512;

export interface CreateOptions {
  body: CreateLobbyRequest;
}

export default defineCommand({
  writes: true,
  summary: 'Create a lobby and join it as a player',
  options: [
    { flags: '--game-mode <mode>', description: 'game mode of the lobby (required)' },
    { flags: '--region <id>', description: 'region id, e.g. lnd-atl (default: the closest)' },
    { flags: '--max-players <n>', description: 'player limit', value: integer({ min: 1 }) },
    { flags: '--publicity <publicity>', description: 'who may find the lobby', choices: ['public', 'private'] },
    { flags: '--tag <key=value>', description: 'a lobby tag; repeat for more', repeatable: true },
    { flags: '--config <json|@file>', description: 'lobby config passed to the server, inline JSON or @file' },
    { flags: '--verification <json|@file>', description: 'verification data, inline JSON or @file' },
    { flags: '--hcaptcha <response>', description: 'hCaptcha client response', conflicts: 'turnstile' },
    { flags: '--turnstile <response>', description: 'Turnstile client response', conflicts: 'hcaptcha' },
  ],
  notes: 'With -q, prints the lobby id alone.',
  examples: [
    'gamehost lobby create --game-mode duos --region lnd-fra',
    'gamehost lobby create --game-mode default --tag map=dust --config \'{"round":3}\'',
    'LOBBY=$(gamehost lobby create --game-mode squads -q)   # in CI',
  ],
  parse(v, ctx): CreateOptions {
    if (!v.gameMode) throw new UsageError('--game-mode is required', 'e.g. --game-mode default');
    const body: CreateLobbyRequest = { game_mode: v.gameMode };
    if (v.region !== undefined) body.region = v.region;
    if (v.maxPlayers !== undefined) body.max_players = v.maxPlayers;
    if (v.publicity !== undefined) body.publicity = v.publicity;
    if (v.tag !== undefined) {
      const tags = parseKeyValues('--tag', v.tag);
      const names = Object.keys(tags);
      if (names.length > MAX_TAGS) throw new UsageError(`--tag: at most ${MAX_TAGS} tags, not ${names.length}`);
      for (const [k, value] of Object.entries(tags)) {
        if (k.length > MAX_TAG_NAME) throw new UsageError(`--tag: a tag name is at most ${MAX_TAG_NAME} characters ("${k.slice(0, 20)}…")`);
        if (value.length > MAX_TAG_VALUE) throw new UsageError(`--tag ${k}: a tag value is at most ${MAX_TAG_VALUE} characters`);
      }
      body.tags = tags;
    }
    if (v.config !== undefined) body.lobby_config = parseJsonArg('--config', v.config, ctx.cwd);
    if (v.verification !== undefined) body.verification_data = parseJsonArg('--verification', v.verification, ctx.cwd);
    if (v.hcaptcha !== undefined) body.captcha = { hcaptcha: { client_response: v.hcaptcha } };
    if (v.turnstile !== undefined) body.captcha = { turnstile: { client_response: v.turnstile } };
    return { body };
  },
  run,
});

async function run(ctx: Context, options: CreateOptions): Promise<void> {
  const { value, text } = await createLobby(await ctx.api(), options.body);
  if (ctx.global.json) return writeJsonText(ctx, text);
  // -q: the lobby id alone, for `LOBBY=$(gamehost lobby create -q …)`.
  if (ctx.global.quiet) return void ctx.io.stdout.write(sanitizeLine(value.lobby.lobby_id) + '\n');
  const { renderCreatedLobby } = await import('../../output/views/lobby.js');
  ctx.io.stdout.write(renderCreatedLobby(ctx, value));
}

/** `--flag <json|@file>`: inline JSON, or @path to a JSON file (relative to cwd). */
function parseJsonArg(flag: string, raw: string, cwd: string): unknown {
  let text = raw;
  let source = 'the value';
  if (raw.startsWith('@')) {
    const file = path.resolve(cwd, raw.slice(1));
    source = file;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      throw new UsageError(`${flag}: cannot read ${file}: ${describeFsError(err)}`);
    }
  }
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new UsageError(`${flag}: ${source} is not valid JSON (${(err as Error).message})`);
  }
}
