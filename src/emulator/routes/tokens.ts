// Namespace token routes: a public token made with a cloud token (matchmaker endpoints refuse cloud tokens).
import type { Reply, RequestContext } from './context.js';
import { authorization } from './request.js';

/** POST /cloud/games/{game_id}/namespaces/{namespace_id}/tokens/public: no body, answers `{ token }`. */
export async function createPublicToken(rc: RequestContext): Promise<Reply> {
  const token = await rc.services.auth.createPublicToken(authorization(rc), rc.params.game_id!, rc.params.namespace_id!);
  return { status: 200, json: { token } };
}
