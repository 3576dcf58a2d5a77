// Bearer authentication: who is calling, and may they call this.
import { fail } from '../errors.js';
import { GAME_ID, NAMESPACE_ID } from './ids.js';
import { signToken, verifyToken, type TokenClaims } from './tokens.js';

const TOKEN_CACHE_MAX = 1024;

export interface EmulatorTokens {
  cloud: string;
  public: string;
  dev: string;
}

/** The tokens of a secret; they depend on nothing else, so they survive restarts. */
export function tokensFor(secret: Buffer): EmulatorTokens {
  return {
    cloud: signToken(secret, { kind: 'cloud', game_id: GAME_ID }),
    public: signToken(secret, { kind: 'pub', game_id: GAME_ID, namespace_id: NAMESPACE_ID }),
    dev: signToken(secret, { kind: 'dev', game_id: GAME_ID, namespace_id: NAMESPACE_ID }),
  };
}

export class Auth {
  /** Verified bearer tokens (null for bad ones), so a busy client costs one HMAC, not one per request. */
  private readonly cache = new Map<string, TokenClaims | null>();

  constructor(private readonly secret: Buffer) {}

  /** null when no Authorization header was sent; throws 401 for anything present but not a good token. */
  bearer(header: string | undefined): TokenClaims | null {
    if (header === undefined) return null;
    if (!header.startsWith('Bearer ')) fail('API_UNAUTHORIZED', { reason: 'the Authorization header must be "Bearer <token>".' });
    const token = header.slice('Bearer '.length).trim();
    let claims = this.cache.get(token);
    if (claims === undefined) {
      claims = verifyToken(this.secret, token);
      if (this.cache.size >= TOKEN_CACHE_MAX) this.cache.clear();
      this.cache.set(token, claims);
    }
    if (claims === null) fail('API_UNAUTHORIZED', { reason: 'the token is malformed or its signature is invalid.' });
    return claims;
  }

  /** Cloud endpoints: a cloud token for the game in the path. */
  cloud(header: string | undefined, gameId: string | undefined): TokenClaims {
    const claims = this.bearer(header);
    if (claims === null) fail('API_UNAUTHORIZED', { reason: 'a cloud token is required.' });
    if (claims.kind !== 'cloud') fail('API_FORBIDDEN', { reason: `a ${claims.kind} namespace token cannot call cloud endpoints.` });
    if (gameId !== undefined && claims.game_id !== gameId) fail('API_FORBIDDEN', { reason: 'the token belongs to another game.' });
    if (gameId !== undefined && gameId !== GAME_ID) fail('API_NOT_FOUND', { what: `Game ${gameId}` });
    return claims;
  }

  /**
   * cloud_games_namespaces_createGameNamespaceTokenPublic: a cloud token of the game makes a public token of one
   * of its namespaces (the emulator's tokens carry no timestamp, so it is the one `emulator serve` prints).
   */
  createPublicToken(header: string | undefined, gameId: string, namespaceId: string): string {
    this.cloud(header, gameId);
    if (namespaceId !== NAMESPACE_ID) fail('API_NOT_FOUND', { what: `Namespace ${namespaceId}` });
    return signToken(this.secret, { kind: 'pub', game_id: gameId, namespace_id: namespaceId });
  }

  /**
   * Matchmaker endpoints: the namespace public token (real answers) or development token (mock answers).
   * `tokenless` lets a request without Authorization through as public.
   */
  namespace(header: string | undefined, tokenless: boolean): 'public' | 'dev' {
    const claims = this.bearer(header);
    if (claims === null) {
      if (tokenless) return 'public';
      fail('API_UNAUTHORIZED', { reason: 'a namespace public token is required.' });
    }
    if (claims.kind === 'cloud') fail('API_FORBIDDEN', { reason: 'a cloud token cannot call matchmaker endpoints; use a namespace token.' });
    if (claims.game_id !== GAME_ID || claims.namespace_id !== NAMESPACE_ID)
      fail('API_FORBIDDEN', { reason: 'the token belongs to another namespace.' });
    return claims.kind === 'dev' ? 'dev' : 'public';
  }
}
