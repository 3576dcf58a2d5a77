// Bearer tokens and player tokens, HMAC-SHA256-signed with the data directory's secret.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TokenKind = 'cloud' | 'pub' | 'dev' | 'lobby';

export interface TokenClaims {
  kind: TokenKind;
  game_id: string;
  /** Present on namespace tokens (pub, dev) and lobby tokens. */
  namespace_id?: string;
  /** Present on lobby tokens: the one lobby it acts for. */
  lobby_id?: string;
}

/** A player token's claims: its player, bound to one lobby. */
export interface PlayerClaims {
  player_id: string;
  lobby_id: string;
  namespace_id: string;
  iat: number;
}

/** A player token's lifetime, as production's. */
export const PLAYER_TOKEN_TTL_S = 90 * 24 * 60 * 60;

function b64url(data: Buffer | string): string {
  return Buffer.from(data).toString('base64url');
}

/**
 * The bytes of canonical unpadded base64url, else null: Node's decoder skips characters outside the alphabet, takes
 * padding and ignores the unused low bits of the last character, which would give one token many spellings.
 */
function fromB64url(text: string): Buffer | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  const bytes = Buffer.from(text, 'base64url');
  return bytes.toString('base64url') === text ? bytes : null;
}

function hmac(secret: Buffer, data: string): Buffer {
  return createHmac('sha256', secret).update(data).digest();
}

/** Production's label of a token: a namespace token's names its namespace by name id (`pub_prod`, `dev_my_ns`). */
function label(claims: TokenClaims, nameId: string): string {
  if (claims.kind === 'cloud' || claims.kind === 'lobby') return claims.kind;
  return `${claims.kind}_${nameId.replace(/-/g, '_')}`;
}

/**
 * `<label>.<base64url(claims)>.<base64url(sig)>`; no timestamps, so a secret always yields the same token. `nameId`:
 * the name id of a namespace token's namespace (the label is signed over, but a token is read by its claims).
 */
export function signToken(secret: Buffer, claims: TokenClaims, nameId = 'prod'): string {
  const ordered: TokenClaims = { kind: claims.kind, game_id: claims.game_id };
  if (claims.namespace_id !== undefined) ordered.namespace_id = claims.namespace_id;
  if (claims.lobby_id !== undefined) ordered.lobby_id = claims.lobby_id;
  const head = `${label(ordered, nameId)}.${b64url(JSON.stringify(ordered))}`;
  return `${head}.${b64url(hmac(secret, head))}`;
}

/** Returns the claims of a well-formed token with a good signature, else null. */
export function verifyToken(secret: Buffer, token: string): TokenClaims | null {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  const [kindLabel, claimsPart, sigPart] = parts as [string, string, string];
  const expected = hmac(secret, `${kindLabel}.${claimsPart}`);
  const given = fromB64url(sigPart);
  if (given === null || given.length !== expected.length || !timingSafeEqual(given, expected)) return null;
  // Signed as sent, so canonical already when the signature is ours; checked all the same, as the signature is.
  const claimsBytes = fromB64url(claimsPart);
  if (claimsBytes === null) return null;
  let claims: unknown;
  try {
    claims = JSON.parse(claimsBytes.toString('utf8'));
  } catch {
    return null;
  }
  if (typeof claims !== 'object' || claims === null) return null;
  const c = claims as Record<string, unknown>;
  if (c.kind !== 'cloud' && c.kind !== 'pub' && c.kind !== 'dev' && c.kind !== 'lobby') return null;
  if (typeof c.game_id !== 'string') return null;
  if (c.kind !== 'cloud' && typeof c.namespace_id !== 'string') return null;
  if (c.kind === 'lobby' && typeof c.lobby_id !== 'string') return null;
  const result: TokenClaims = { kind: c.kind, game_id: c.game_id };
  if (typeof c.namespace_id === 'string') result.namespace_id = c.namespace_id;
  if (c.kind === 'lobby') result.lobby_id = c.lobby_id as string;
  // The label is outside the claims, so check it agrees with them: a namespace token's names its kind and a
  // namespace (by name id; by UUID for tokens signed before namespaces had names).
  const agrees = result.kind === 'cloud' || result.kind === 'lobby' ? kindLabel === result.kind : new RegExp(`^${result.kind}_[0-9a-z_-]{1,36}$`).test(kindLabel);
  return agrees ? result : null;
}

/**
 * `player.<JWT>` (HS256), as production hands out for `player.token`: the label, then a JWT bound to the player
 * and its lobby, valid 90 days. A development token's mock player gets the label `dev_player`.
 */
export function signPlayerToken(secret: Buffer, claims: PlayerClaims, labelText: 'player' | 'dev_player' = 'player'): string {
  const body = { iss: 'gamehost-emulator', sub: claims.player_id, ...claims, exp: claims.iat + PLAYER_TOKEN_TTL_S };
  const head = `${labelText}.${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(JSON.stringify(body))}`;
  return `${head}.${b64url(hmac(secret, head))}`;
}

export type PlayerTokenCheck =
  | { kind: 'player'; claims: PlayerClaims }
  | { kind: 'dev_player' }
  | { kind: 'malformed' }
  | { kind: 'expired' }
  | { kind: 'not_player' };

/** What a token presented as a player token is: a good player token, an expired one, another kind, or junk. */
export function verifyPlayerToken(secret: Buffer, token: string, nowMs: number): PlayerTokenCheck {
  if (verifyToken(secret, token) !== null) return { kind: 'not_player' };
  const parts = token.split('.');
  if (parts.length !== 4 || (parts[0] !== 'player' && parts[0] !== 'dev_player')) return { kind: 'malformed' };
  const head = parts.slice(0, 3).join('.');
  const expected = hmac(secret, head);
  // Each part in its one canonical spelling, as the other tokens: no padding, no flipped unused bits.
  const given = fromB64url(parts[3]!);
  if (given === null || given.length !== expected.length || !timingSafeEqual(given, expected)) return { kind: 'malformed' };
  const header = fromB64url(parts[1]!);
  const body = fromB64url(parts[2]!);
  if (header === null || body === null) return { kind: 'malformed' };
  let c: Record<string, unknown>;
  try {
    c = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  } catch {
    return { kind: 'malformed' };
  }
  if (typeof c.exp !== 'number' || c.exp * 1000 <= nowMs) return { kind: 'expired' };
  if (parts[0] === 'dev_player') return { kind: 'dev_player' };
  if (typeof c.player_id !== 'string' || typeof c.lobby_id !== 'string' || typeof c.namespace_id !== 'string' || typeof c.iat !== 'number')
    return { kind: 'malformed' };
  return { kind: 'player', claims: { player_id: c.player_id, lobby_id: c.lobby_id, namespace_id: c.namespace_id, iat: c.iat } };
}
