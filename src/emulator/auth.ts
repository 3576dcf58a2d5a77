// Bearer authentication: who is calling, and may they call this.
import type { RequestContext } from './context.js';
import { fail } from './errors.js';
import { GAME_ID, NAMESPACE_ID } from './ids.js';
import { verifyToken, type TokenClaims } from './tokens.js';

const TOKEN_CACHE_MAX = 1024;

/** null when no Authorization header was sent; throws 401 for anything present but not a good token. */
export function bearer(rc: RequestContext): TokenClaims | null {
  const header = rc.req.headers.authorization;
  if (header === undefined) return null;
  if (!header.startsWith('Bearer ')) fail('API_UNAUTHORIZED', { reason: 'the Authorization header must be "Bearer <token>".' });
  const token = header.slice('Bearer '.length).trim();
  const cache = rc.emu.tokenCache;
  let claims = cache.get(token);
  if (claims === undefined) {
    claims = verifyToken(rc.emu.secret, token);
    if (cache.size >= TOKEN_CACHE_MAX) cache.clear();
    cache.set(token, claims);
  }
  if (claims === null) fail('API_UNAUTHORIZED', { reason: 'the token is malformed or its signature is invalid.' });
  return claims;
}

/** Cloud endpoints: a cloud token for the game in the path. */
export function requireCloud(rc: RequestContext, gameId: string | undefined): TokenClaims {
  const claims = bearer(rc);
  if (claims === null) fail('API_UNAUTHORIZED', { reason: 'a cloud token is required.' });
  if (claims.kind !== 'cloud') fail('API_FORBIDDEN', { reason: `a ${claims.kind} namespace token cannot call cloud endpoints.` });
  if (gameId !== undefined && claims.game_id !== gameId) fail('API_FORBIDDEN', { reason: 'the token belongs to another game.' });
  if (gameId !== undefined && gameId !== GAME_ID) fail('API_NOT_FOUND', { what: `Game ${gameId}` });
  return claims;
}

/**
 * Matchmaker endpoints: the namespace public token (real answers) or development token (mock answers).
 * `tokenless` lets a request without Authorization through as public.
 */
export function requireNamespace(rc: RequestContext, tokenless: boolean): 'public' | 'dev' {
  const claims = bearer(rc);
  if (claims === null) {
    if (tokenless) return 'public';
    fail('API_UNAUTHORIZED', { reason: 'a namespace public token is required.' });
  }
  if (claims.kind === 'cloud') fail('API_FORBIDDEN', { reason: 'a cloud token cannot call matchmaker endpoints; use a namespace token.' });
  if (claims.game_id !== GAME_ID || claims.namespace_id !== NAMESPACE_ID)
    fail('API_FORBIDDEN', { reason: 'the token belongs to another namespace.' });
  return claims.kind === 'dev' ? 'dev' : 'public';
}
