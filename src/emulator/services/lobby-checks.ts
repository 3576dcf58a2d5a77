// The checks of what a create, find or join asks for, each as production answers it, against the game modes of the
// version it runs; the order they run in is the caller's.
import { fail } from '../errors.js';
import type { RunningVersion } from './lobby-versions.js';
import type { GameModeConfig } from './version-config.js';
import { nameList } from './names.js';

export const DEFAULT_MAX_PLAYERS = 32;
export const MAX_PLAYERS_LIMIT = 256;
const MAX_TAGS = 8;
const MAX_TAG_NAME_BYTES = 128;
const MAX_TAG_VALUE_BYTES = 512;
/** The largest `lobby_config` a create takes, in bytes of its JSON as re-serialised: production's bound. */
export const MAX_LOBBY_CONFIG_BYTES = 16 * 1024;

/** The version's game modes by the names asked for, in their order. */
export function checkGameModes(version: RunningVersion, modes: string[]): GameModeConfig[] {
  return modes.map(
    (mode) =>
      version.gameModes.find((m) => m.nameId === mode) ??
      fail('MATCHMAKER_GAME_MODE_NOT_FOUND', { game_mode: mode, known: nameList(version.gameModes.map((m) => m.nameId)) }),
  );
}

/** The limits of count and length, then every game mode must be taggable (when any tag is given). */
export function checkTags(tags: Record<string, string>, gameModes: GameModeConfig[]): void {
  const tagNames = Object.keys(tags);
  if (tagNames.length === 0) return;
  if (tagNames.length > MAX_TAGS) fail('MATCHMAKER_TOO_MANY_TAGS', { count: tagNames.length });
  // Production measures tag lengths in bytes (Rust String::len).
  for (const name of tagNames) {
    if (Buffer.byteLength(name) > MAX_TAG_NAME_BYTES) fail('MATCHMAKER_TAG_NAME_TOO_LONG');
    if (Buffer.byteLength(tags[name]!) > MAX_TAG_VALUE_BYTES) fail('MATCHMAKER_TAG_TOO_LONG', { name });
  }
  for (const gm of gameModes) if (!gm.taggable) fail('MATCHMAKER_TAGS_DISABLED', { game_mode: gm.nameId });
}

/**
 * A find's or create's max_players, in production's order: at least 1, the game mode allows it, at most the larger of
 * its normal and direct counts (the seeded version's bound is the emulator's own, 256, as it always was).
 */
export function checkMaxPlayers(maxPlayers: number | undefined, gameModes: GameModeConfig[], version: RunningVersion): void {
  if (maxPlayers === undefined) return;
  const bound = (gm: GameModeConfig) => (version.seeded ? MAX_PLAYERS_LIMIT : Math.max(gm.maxPlayers, gm.maxPlayersDirect));
  if (maxPlayers < 1) fail('MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID', { max: bound(gameModes[0]!) });
  for (const gm of gameModes) {
    if (!gm.allowDynamicMaxPlayers) fail('MATCHMAKER_DYNAMIC_MAX_PLAYERS_DISABLED', { game_mode: gm.nameId });
    if (maxPlayers > bound(gm)) fail('MATCHMAKER_DYNAMIC_MAX_PLAYERS_INVALID', { max: bound(gm) });
  }
}

/**
 * What a game mode's actions allow a namespace token (which names no game user) to do, in production's order:
 * the action enabled (create: its block present, and the publicity allowed), then the identity it requires.
 * Verification calls are not made.
 */
export function checkAction(kind: 'find' | 'join', gameModes: GameModeConfig[]): void;
export function checkAction(kind: 'create', gameModes: GameModeConfig[], publicity: 'public' | 'private'): void;
export function checkAction(kind: 'find' | 'join' | 'create', gameModes: GameModeConfig[], publicity?: 'public' | 'private'): void {
  let identity = false;
  for (const gm of gameModes) {
    const action = gm.actions?.[kind] ?? null;
    if (kind === 'create') {
      const create = gm.actions?.create ?? fail('MATCHMAKER_CUSTOM_LOBBIES_DISABLED');
      if (!(publicity === 'public' ? create.enablePublic : create.enablePrivate))
        fail('MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID', { reason: `"${publicity}" publicity not allowed with this custom game mode` });
    } else if (action !== null && !action.enabled) fail(kind === 'find' ? 'MATCHMAKER_FIND_DISABLED' : 'MATCHMAKER_JOIN_DISABLED');
    identity ||= action !== null && action.identityRequirement !== 'none';
  }
  if (identity) fail('MATCHMAKER_IDENTITY_REQUIRED');
}

/** A create's publicity when it names none: public where the game mode allows it, else private (production's). */
export function defaultPublicity(gm: GameModeConfig): 'public' | 'private' {
  return gm.actions?.create?.enablePublic ? 'public' : 'private';
}

/** Production's bound; past it the config would also not fit in the server's environment. */
export function checkLobbyConfig(lobbyConfig: unknown): void {
  if (lobbyConfig !== undefined && Buffer.byteLength(JSON.stringify(lobbyConfig)) > MAX_LOBBY_CONFIG_BYTES)
    fail('MATCHMAKER_CUSTOM_LOBBY_CONFIG_INVALID', { reason: `too large (> ${MAX_LOBBY_CONFIG_BYTES / 1024}KiB)` });
}
