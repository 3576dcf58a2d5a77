// Bearer authentication: who is calling, and may they call this. A token names its game; the game must still be
// there (neither deleted nor expired), whichever process deleted it.
import { fail } from '../errors.js';
import type { Game, Games } from './games.js';
import { signToken, verifyToken, type TokenClaims } from './tokens.js';

const TOKEN_CACHE_MAX = 1024;

export class Auth {
  /** Verified bearer tokens (null for bad ones), so a busy client costs one HMAC, not one per request. */
  private readonly cache = new Map<string, TokenClaims | null>();

  constructor(
    private readonly secret: Buffer,
    private readonly games: Games,
  ) {}

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

  /** The token's game, or 401: a deleted or expired game's tokens are no longer good anywhere. */
  private async gameOf(claims: TokenClaims): Promise<Game> {
    const game = await this.games.live(claims.game_id);
    if (game === undefined) fail('API_UNAUTHORIZED', { reason: 'the game of this token was deleted or has expired.' });
    return game;
  }

  /** Cloud endpoints: a cloud token for the game in the path (any game's when the path names none). */
  async cloud(header: string | undefined, gameId: string | undefined): Promise<Game> {
    const claims = this.bearer(header);
    if (claims === null) fail('API_UNAUTHORIZED', { reason: 'a cloud token is required.' });
    if (claims.kind !== 'cloud') fail('API_FORBIDDEN', { reason: `a ${claims.kind} namespace token cannot call cloud endpoints.` });
    const game = await this.gameOf(claims);
    if (gameId !== undefined && claims.game_id !== gameId) fail('API_FORBIDDEN', { reason: 'the token belongs to another game.' });
    return game;
  }

  /**
   * cloud_games_namespaces_createGameNamespaceTokenPublic: a cloud token of the game makes a public token of its
   * namespace (the emulator's tokens carry no timestamp, so it is the one `emulator serve` or `game create` printed).
   */
  async createPublicToken(header: string | undefined, gameId: string, namespaceId: string): Promise<string> {
    const game = await this.cloud(header, gameId);
    if (namespaceId !== game.namespaceId) fail('API_NOT_FOUND', { what: `Namespace ${namespaceId}` });
    return signToken(this.secret, { kind: 'pub', game_id: game.gameId, namespace_id: game.namespaceId });
  }

  /**
   * Matchmaker endpoints: the namespace public token (real answers) or development token (mock answers), and the
   * game whose namespace it is. `tokenless` lets a request without Authorization through as public, to the seeded
   * game (nothing else names one).
   */
  async namespace(header: string | undefined, tokenless: boolean): Promise<{ mode: 'public' | 'dev'; game: Game }> {
    const claims = this.bearer(header);
    if (claims === null) {
      if (tokenless) return { mode: 'public', game: this.games.seeded };
      fail('API_UNAUTHORIZED', { reason: 'a namespace public token is required.' });
    }
    if (claims.kind === 'cloud') fail('API_FORBIDDEN', { reason: 'a cloud token cannot call matchmaker endpoints; use a namespace token.' });
    const game = await this.gameOf(claims);
    if (claims.namespace_id !== game.namespaceId) fail('API_FORBIDDEN', { reason: 'the token belongs to another namespace.' });
    return { mode: claims.kind === 'dev' ? 'dev' : 'public', game };
  }
}
