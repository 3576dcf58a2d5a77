// Bearer tokens and player tokens, HMAC-SHA256-signed with the data directory's secret.
import { createHmac, timingSafeEqual } from 'node:crypto';

export type TokenKind = 'cloud' | 'pub' | 'dev';

export interface TokenClaims {
  kind: TokenKind;
  game_id: string;
  /** Present on namespace tokens (pub, dev). */
  namespace_id?: string;
}

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

function label(claims: TokenClaims): string {
  return claims.kind === 'cloud' ? 'cloud' : `${claims.kind}_${claims.namespace_id ?? ''}`;
}

/** `<kind>.<base64url(claims)>.<base64url(sig)>`; no timestamps, so a secret always yields the same token. */
export function signToken(secret: Buffer, claims: TokenClaims): string {
  const ordered: TokenClaims = { kind: claims.kind, game_id: claims.game_id };
  if (claims.namespace_id !== undefined) ordered.namespace_id = claims.namespace_id;
  const head = `${label(ordered)}.${b64url(JSON.stringify(ordered))}`;
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
  if (c.kind !== 'cloud' && c.kind !== 'pub' && c.kind !== 'dev') return null;
  if (typeof c.game_id !== 'string') return null;
  if (c.kind !== 'cloud' && typeof c.namespace_id !== 'string') return null;
  const result: TokenClaims = { kind: c.kind, game_id: c.game_id };
  if (typeof c.namespace_id === 'string') result.namespace_id = c.namespace_id;
  // The label is outside the claims, so check it agrees with them.
  return kindLabel === label(result) ? result : null;
}

/** A real HS256 JWT, as the production service hands out for `player.token`. */
export function signPlayerToken(
  secret: Buffer,
  claims: { player_id: string; lobby_id: string; namespace_id: string; iat: number },
): string {
  const head = `${b64url(JSON.stringify({ alg: 'HS256', typ: 'JWT' }))}.${b64url(
    JSON.stringify({ iss: 'gamehost-emulator', sub: claims.player_id, ...claims }),
  )}`;
  return `${head}.${b64url(hmac(secret, head))}`;
}
