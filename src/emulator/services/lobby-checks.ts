// The checks of what a create or find asks for, each as production answers it; the order they run in is the caller's.
import { fail } from '../errors.js';
import type { Game } from './games.js';

export const DEFAULT_MAX_PLAYERS = 32;
export const MAX_PLAYERS_LIMIT = 256;
const MAX_TAGS = 8;
const MAX_TAG_NAME_BYTES = 128;
const MAX_TAG_VALUE_BYTES = 512;
/** The largest `lobby_config` a create takes, in bytes of its JSON as re-serialised: production's bound. */
export const MAX_LOBBY_CONFIG_BYTES = 16 * 1024;
const NAMED = 10;

/** `a, b and c`; past ten, `… and 12 more` (never `1 more`: the one is named instead). */
export function nameList(names: readonly string[]): string {
  const shown = names.length <= NAMED + 1 ? [...names] : [...names.slice(0, NAMED), `${names.length - NAMED} more`];
  return shown.length === 1 ? shown[0]! : `${shown.slice(0, -1).join(', ')} and ${shown.at(-1)}`;
}

export function checkGameModes(game: Game, modes: string[]): void {
  for (const mode of modes)
    if (!game.gameModes.includes(mode)) fail('MATCHMAKER_GAME_MODE_NOT_FOUND', { game_mode: mode, known: nameList(game.gameModes) });
}

export function checkTags(tags: Record<string, string>): void {
  const tagNames = Object.keys(tags);
  if (tagNames.length > MAX_TAGS) fail('MATCHMAKER_TOO_MANY_TAGS', { count: tagNames.length });
  // Production measures tag lengths in bytes (Rust String::len).
  for (const name of tagNames) {
    if (Buffer.byteLength(name) > MAX_TAG_NAME_BYTES) fail('MATCHMAKER_TAG_NAME_TOO_LONG');
    if (Buffer.byteLength(tags[name]!) > MAX_TAG_VALUE_BYTES) fail('MATCHMAKER_TAG_TOO_LONG', { name });
  }
}

export function checkMaxPlayers(maxPlayers: number | undefined): void {
  if (maxPlayers !== undefined && (maxPlayers < 1 || maxPlayers > MAX_PLAYERS_LIMIT))
    fail('MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID', { max: MAX_PLAYERS_LIMIT });
}

/** Production's bound; past it the config would also not fit in the server's environment. */
export function checkLobbyConfig(lobbyConfig: unknown): void {
  if (lobbyConfig !== undefined && Buffer.byteLength(JSON.stringify(lobbyConfig)) > MAX_LOBBY_CONFIG_BYTES)
    fail('MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID', { reason: `too large (> ${MAX_LOBBY_CONFIG_BYTES / 1024}KiB)` });
}
