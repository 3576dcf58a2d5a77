// Matchmaker calls (lobby create, player statistics) refuse cloud tokens. With a cloud token and no namespace token,
// the client makes a public namespace token with the cloud token, as the service offers
// (cloud_games_namespaces_createGameNamespaceTokenPublic), keeps it for the next commands
// (src/config/namespace-tokens.ts), and makes a fresh one, once, when the service refuses the kept one.
import type { BaseContext } from '../base-context.js';
import type { Target } from '../config/target.js';
import { ApiError, UsageError } from '../errors.js';
import type { CreateNamespaceTokenPublicResponse } from './types.js';

/** What this needs of the client, which loads it (so not the class): where it talks to, and a call with the cloud token. */
export interface TokenClient {
  readonly target: Target;
  call<T>(spec: { method: 'POST'; path: string; auth: 'cloud'; idempotent: true }): Promise<T>;
}

interface Token {
  value: string;
  /** Read from the file, so possibly revoked since; a token made by this command is not made again. */
  kept: boolean;
}

/** The token of each client: made or read once per command. */
const tokens = new WeakMap<TokenClient, Promise<Token>>();

/** Answers that say the token itself is no good (the service's codes for revoked, expired and invalid tokens). */
function refusesToken(err: unknown): boolean {
  if (!(err instanceof ApiError)) return false;
  return err.status === 401 || (err.status === 403 && err.code === 'TOKEN_REVOKED') || ['TOKEN_EXPIRED', 'TOKEN_INVALID'].includes(err.code);
}

/** Runs `call` with a public namespace token made from the cloud token; a refused kept token is replaced once. */
export async function withNamespaceToken<T>(api: TokenClient, ctx: BaseContext, call: (token: string) => Promise<T>): Promise<T> {
  let pending = tokens.get(api);
  if (!pending) tokens.set(api, (pending = obtain(api, ctx)));
  const token = await pending;
  try {
    return await call(token.value);
  } catch (err) {
    if (!token.kept || !refusesToken(err)) throw err;
    const fresh = make(api, ctx, `the kept namespace token was refused (${(err as ApiError).status} ${(err as ApiError).code})`);
    tokens.set(api, fresh);
    return call((await fresh).value);
  }
}

function place(api: TokenClient) {
  const { endpoint, gameId, namespaceId } = api.target;
  if (!gameId || !namespaceId) {
    throw new UsageError(
      'no namespace token, and no game and namespace ids to make one with the cloud token',
      'pass --namespace-token (or set GAMEHOST_NAMESPACE_TOKEN), or give --game <id> and --namespace <id>',
    );
  }
  return { endpoint, gameId, namespaceId };
}

async function obtain(api: TokenClient, ctx: BaseContext): Promise<Token> {
  const where = place(api);
  // The embedded emulator lives for one command on a new port: nothing to keep.
  if (!api.target.embedded) {
    const { keptNamespaceToken } = await import('../config/namespace-tokens.js');
    const kept = keptNamespaceToken(ctx.env, where);
    if (kept) {
      ctx.verbose('namespace token: the one kept from the cloud token');
      return { value: kept, kept: true };
    }
  }
  return make(api, ctx);
}

async function make(api: TokenClient, ctx: BaseContext, why?: string): Promise<Token> {
  const where = place(api);
  const { keepNamespaceToken, namespaceTokensFile } = await import('../config/namespace-tokens.js');
  const { token } = await createNamespaceTokenPublic(api, where.gameId, where.namespaceId);
  if (typeof token !== 'string' || token === '') throw new ApiError(200, { code: 'BAD_RESPONSE', message: 'the service made a namespace token, but its answer holds none' });
  if (api.target.embedded) return { value: token, kept: false };
  keepNamespaceToken(ctx.env, where, token, ctx.now());
  ctx.info(
    `${why ? why[0]!.toUpperCase() + why.slice(1) + '; made' : 'Made'} a public namespace token with the cloud token (the matchmaker refuses cloud tokens); ` +
      `kept in ${namespaceTokensFile(ctx.env)} for the next commands.`,
  );
  return { value: token, kept: false };
}

/**
 * cloud.games.namespaces.createGameNamespaceTokenPublic: no body. Asking twice makes a second token, harmlessly.
 * Here rather than in operations.ts, which imports the client that loads this module.
 */
function createNamespaceTokenPublic(api: TokenClient, gameId: string, namespaceId: string): Promise<CreateNamespaceTokenPublicResponse> {
  const path = `/cloud/games/${encodeURIComponent(gameId)}/namespaces/${encodeURIComponent(namespaceId)}/tokens/public`;
  return api.call({ method: 'POST', path, auth: 'cloud', idempotent: true });
}
