// Bearer authentication: who is calling, and may they call this. A token names its game; the game must still be
// there (neither deleted nor expired), whichever process deleted it.
import { fail } from '../errors.js';
import type { Game, Games } from './games.js';
import type { LobbyCaller } from './lobby-calls.js';
import type { Namespaces } from './namespaces.js';
import { signToken, verifyToken, type TokenClaims } from './tokens.js';

const TOKEN_CACHE_MAX = 1024;

export class Auth {
  /** Verified bearer tokens (null for bad ones), so a busy client costs one HMAC, not one per request. */
  private readonly cache = new Map<string, TokenClaims | null>();

  constructor(
    private readonly secret: Buffer,
    private readonly games: Games,
    private readonly namespaces: Namespaces,
  ) {}

  /**
   * The game as a namespace token's (or lobby token's) namespace sees it: the matchmaker's lobbies, players and
   * statistics are that namespace's. undefined when the namespace is not one of the game's.
   */
  private async scoped(game: Game, namespaceId: string | undefined): Promise<Game | undefined> {
    if (namespaceId === game.namespaceId) return game;
    if (namespaceId === undefined || !(await this.namespaces.belongs(game, namespaceId))) return undefined;
    return { ...game, namespaceId };
  }

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
   * A public or development token of a namespace of the game, labelled by its name id as production's
   * (`pub_prod.…`). The emulator's tokens carry no timestamp: the one `emulator serve` or `game create` printed.
   */
  async createNamespaceToken(header: string | undefined, gameId: string, namespaceId: string, kind: 'pub' | 'dev'): Promise<string> {
    const game = await this.cloud(header, gameId);
    const ns = await this.namespaces.get(game, namespaceId);
    return signToken(this.secret, { kind, game_id: game.gameId, namespace_id: ns.namespaceId }, ns.nameId);
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
    if (claims.kind === 'lobby') fail('CLAIMS_MISSING_ENTITLEMENT', { reason: 'a lobby token is only for the lobby routes of its own lobby.' });
    const game = await this.scoped(await this.gameOf(claims), claims.namespace_id);
    if (game === undefined) fail('API_FORBIDDEN', { reason: 'the token belongs to another namespace.' });
    return { mode: claims.kind === 'dev' ? 'dev' : 'public', game };
  }

  /**
   * Lobby routes (ready, closed, state, players connected and disconnected): a lobby token acts for its own lobby;
   * a development token gets mock answers; any other token is 401 CLAIMS_MISSING_ENTITLEMENT.
   */
  async lobby(header: string | undefined): Promise<LobbyCaller> {
    const claims = this.bearer(header);
    if (claims === null) fail('API_UNAUTHORIZED', { reason: 'a lobby token (RIVET_TOKEN in the lobby\'s environment) is required.' });
    if (claims.kind === 'dev') {
      await this.namespace(header, false);
      return { mode: 'dev' };
    }
    if (claims.kind !== 'lobby')
      fail('CLAIMS_MISSING_ENTITLEMENT', { reason: 'the lobby routes take the lobby token its process was given (RIVET_TOKEN).' });
    const game = await this.scoped(await this.gameOf(claims), claims.namespace_id);
    if (game === undefined) fail('CLAIMS_MISSING_ENTITLEMENT', { reason: 'the token belongs to another namespace.' });
    return { mode: 'lobby', game, lobbyId: claims.lobby_id! };
  }

  /**
   * GET a lobby's state: a namespace token (the development token's answer is null) or a lobby token, which reads
   * its own lobby only. Answers the game whose lobbies may be read, null for the mock.
   */
  async stateReader(header: string | undefined, lobbyId: string, tokenless: boolean): Promise<Game | null> {
    const claims = this.bearer(header);
    if (claims?.kind === 'lobby') {
      const caller = await this.lobby(header);
      if (caller.mode !== 'lobby' || caller.lobbyId !== lobbyId)
        fail('CLAIMS_MISSING_ENTITLEMENT', { reason: 'a lobby token reads the state of its own lobby only.' });
      return caller.game;
    }
    const { mode, game } = await this.namespace(header, tokenless);
    return mode === 'dev' ? null : game;
  }
}
