// A game's versions: what the service would check of a new version's config (cloud_games_versions_validateGameVersion).
import { fail } from '../errors.js';
import { VERSION_NAME } from '../services/ids.js';
import { validateVersion } from '../services/version-validate.js';
import type { Reply, RequestContext } from './context.js';
import { authorization, optObject, readJson, reqString } from './request.js';

/**
 * POST /cloud/games/{game_id}/versions/validate {display_name, config}: always 200 with the errors production's
 * validation finds, each as a path (none: valid). Like production, it does not look for the builds it names.
 */
export async function validateGameVersion(rc: RequestContext): Promise<Reply> {
  const game = await rc.services.auth.cloud(authorization(rc), rc.params.game_id);
  const body = await readJson(rc, { emptyIsObject: true });
  const displayName = reqString(body, 'display_name');
  const config = optObject(body, 'config') ?? fail('API_BAD_BODY', { reason: 'config is required.' });
  const errors = validateVersion(displayName, config, { regions: game.regions.map((r) => r.id), displayNames: [VERSION_NAME] });
  return { status: 200, json: { errors: errors.map((path) => ({ path })) } };
}
