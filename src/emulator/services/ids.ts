// Fixed identifiers of the seeded game and namespace (every emulator has them; games per CI job get random ids),
// and stable ids derived from names.
import { createHash } from 'node:crypto';

export const GAME_ID = '6b1f4a2e-3c5d-4e7f-8a9b-0c1d2e3f4a5b';
export const NAMESPACE_ID = '9d2c7e41-5b6a-4f3e-9c8d-7a6b5c4d3e2f';
export const VERSION_NAME = '0.0.1';
/** When the seeded game (and its version) "was created": fixed, so answers are the same from one run to the next. */
export const SEEDED_CREATE_TS = Date.UTC(2024, 0, 1);

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID_RE.test(value);
}

/** A name-based UUID (v5 layout over SHA-1), so regions and game modes keep their UUIDs across restarts. */
export function stableUuid(kind: string, name: string): string {
  const h = createHash('sha1').update(`gamehost-emulator:${kind}:${name}`).digest();
  h[6] = (h[6]! & 0x0f) | 0x50;
  h[8] = (h[8]! & 0x3f) | 0x80;
  const hex = h.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20, 32)}`;
}

export const VERSION_ID = stableUuid('version', VERSION_NAME);
export const regionUuid = (regionNameId: string): string => stableUuid('region', regionNameId);
export const lobbyGroupUuid = (gameMode: string): string => stableUuid('lobby-group', gameMode);
/** The namespace a game starts with besides `prod` (whose id the game keeps): derived, so it needs no row. */
export const stagingNamespaceId = (gameId: string): string => stableUuid('namespace', `${gameId}:staging`);
