// A game's versions: validate, create, read and name them (cloud_games_versions_*).
import { fail } from '../errors.js';
import type { Reply, RequestContext } from './context.js';
import { authorization, optObject, readJson, reqString } from './request.js';

async function versionBody(rc: RequestContext) {
  const game = await rc.services.auth.cloud(authorization(rc), rc.params.game_id);
  const body = await readJson(rc, { emptyIsObject: true });
  const displayName = reqString(body, 'display_name');
  const config = optObject(body, 'config') ?? fail('API_BAD_BODY', { reason: 'config is required.' });
  return { game, displayName, config };
}

/**
 * POST /cloud/games/{game_id}/versions/validate {display_name, config}: always 200 with the errors production's
 * validation finds, each as a path (none: valid). Like production, it does not look for the builds it names.
 */
export async function validateGameVersion(rc: RequestContext): Promise<Reply> {
  const { game, displayName, config } = await versionBody(rc);
  const errors = await rc.services.versions.validate(game, displayName, config);
  return { status: 200, json: { errors: errors.map((path) => ({ path })) } };
}

/** POST /cloud/games/{game_id}/versions {display_name, config}: `{version_id}`, or every validation error. */
export async function createGameVersion(rc: RequestContext): Promise<Reply> {
  const { game, displayName, config } = await versionBody(rc);
  return { status: 200, json: { version_id: await rc.services.versions.create(game, displayName, config) } };
}

/** GET /cloud/games/{game_id}/versions/{version_id}: the version, its config normalised. */
export async function getGameVersion(rc: RequestContext): Promise<Reply> {
  const game = await rc.services.auth.cloud(authorization(rc), rc.params.game_id);
  const v = await rc.services.versions.get(game, rc.params.version_id!);
  return { status: 200, json: { version: { ...v, create_ts: new Date(v.create_ts).toISOString() } } };
}

/** POST /cloud/games/{game_id}/versions/reserve-name (body ignored): `{version_display_name}`, YYYY.MM.DD-N. */
export async function reserveVersionName(rc: RequestContext): Promise<Reply> {
  const game = await rc.services.auth.cloud(authorization(rc), rc.params.game_id);
  return { status: 200, json: { version_display_name: await rc.services.versions.reserveName(game) } };
}
