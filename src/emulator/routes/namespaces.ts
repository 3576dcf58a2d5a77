// A game's namespaces: create, read, deploy a version to, its deploys, its matchmaker config, and its tokens
// (cloud_games_namespaces_*).
import { fail } from '../errors.js';
import { matchmakerConfig, type Namespace } from '../services/namespaces.js';
import type { Reply, RequestContext } from './context.js';
import { authorization, optObject, readJson, reqInteger, reqString } from './request.js';

const iso = (ms: number): string => new Date(ms).toISOString();

/** A namespace as `GET /cloud/games/{game_id}` lists it. */
export function namespaceSummary(ns: Namespace): { namespace_id: string; create_ts: string; display_name: string; version_id: string; name_id: string } {
  return { namespace_id: ns.namespaceId, create_ts: iso(ns.createTs), display_name: ns.displayName, version_id: ns.versionId, name_id: ns.nameId };
}

async function cloudGame(rc: RequestContext) {
  return rc.services.auth.cloud(authorization(rc), rc.params.game_id);
}

/** POST /cloud/games/{game_id}/namespaces {display_name, version_id, name_id}: `{namespace_id}`. */
export async function createNamespace(rc: RequestContext): Promise<Reply> {
  const game = await cloudGame(rc);
  const body = await readJson(rc, { emptyIsObject: true });
  const request = { displayName: reqString(body, 'display_name'), versionId: reqString(body, 'version_id'), nameId: reqString(body, 'name_id') };
  return { status: 200, json: { namespace_id: await rc.services.namespaces.create(game, request) } };
}

/** GET /cloud/games/{game_id}/namespaces/{namespace_id}: the namespace with its config. */
export async function getNamespace(rc: RequestContext): Promise<Reply> {
  const game = await cloudGame(rc);
  const ns = await rc.services.namespaces.get(game, rc.params.namespace_id!);
  const config = { cdn: emptyCdn(), matchmaker: matchmakerConfig(ns), kv: {}, identity: {} };
  return { status: 200, json: { namespace: { ...namespaceSummary(ns), config } } };
}

/** The CDN config of a namespace: the emulator serves no CDN, so it is what production answers for a new one. */
function emptyCdn() {
  return { enable_domain_public_auth: false, domains: [], auth_type: 'none', auth_user_list: [] };
}

/** PUT /cloud/games/{game_id}/namespaces/{namespace_id}/version {version_id}: deploys the version; `{}`. */
export async function setNamespaceVersion(rc: RequestContext): Promise<Reply> {
  const game = await cloudGame(rc);
  const body = await readJson(rc, { emptyIsObject: true });
  await rc.services.namespaces.setVersion(game, rc.params.namespace_id!, reqString(body, 'version_id'));
  return { status: 200, json: {} };
}

/** GET /cloud/games/{game_id}/namespaces/{namespace_id}/version-history?limit=&anchor=: its deploys, newest first. */
export async function namespaceVersionHistory(rc: RequestContext): Promise<Reply> {
  const game = await cloudGame(rc);
  const limit = integerQuery(rc, 'limit');
  // Production parses `anchor` as an integer and reads no further.
  integerQuery(rc, 'anchor');
  const rows = await rc.services.namespaces.history(game, rc.params.namespace_id!, limit);
  return { status: 200, json: { versions: rows.map((r) => ({ namespace_id: r.namespace_id, version_id: r.version_id, deploy_ts: iso(r.deploy_ts) })) } };
}

function integerQuery(rc: RequestContext, name: string): number | undefined {
  const text = rc.query.get(name);
  if (text === null) return undefined;
  if (!/^\d{1,9}$/.test(text)) fail('API_BAD_QUERY_PARAMETER', { name, reason: `"${text}" is not a non-negative integer.` });
  return Number(text);
}

async function mmConfigBody(rc: RequestContext) {
  const body = await readJson(rc, { emptyIsObject: true });
  return { lobbyCountMax: reqInteger(body, 'lobby_count_max'), maxPlayers: reqInteger(body, 'max_players') };
}

/** POST …/namespaces/{namespace_id}/mm-config {lobby_count_max, max_players}: `{}`, or every validation error. */
export async function setNamespaceMatchmakerConfig(rc: RequestContext): Promise<Reply> {
  const game = await cloudGame(rc);
  await rc.services.namespaces.setConfig(game, rc.params.namespace_id!, await mmConfigBody(rc));
  return { status: 200, json: {} };
}

/** POST …/namespaces/{namespace_id}/mm-config/validate: always 200 `{errors}`. */
export async function validateNamespaceMatchmakerConfig(rc: RequestContext): Promise<Reply> {
  const game = await cloudGame(rc);
  await rc.services.namespaces.get(game, rc.params.namespace_id!);
  const errors = rc.services.namespaces.validateConfig(await mmConfigBody(rc));
  return { status: 200, json: { errors: errors.map((path) => ({ path })) } };
}

/** POST …/namespaces/{namespace_id}/tokens/public: no body, `{token}`. */
export async function createPublicToken(rc: RequestContext): Promise<Reply> {
  const token = await rc.services.auth.createNamespaceToken(authorization(rc), rc.params.game_id!, rc.params.namespace_id!, 'pub');
  return { status: 200, json: { token } };
}

/**
 * POST …/namespaces/{namespace_id}/tokens/development {hostname, ports?, lobby_ports?}: `{token}`. The emulator's
 * development token answers the matchmaker's mock answers; the hostname and ports are checked, not kept.
 */
export async function createDevelopmentToken(rc: RequestContext): Promise<Reply> {
  const body = await readJson(rc, { emptyIsObject: true });
  reqString(body, 'hostname');
  const ports = optObject(body, 'ports');
  if (ports !== undefined && body.lobby_ports !== undefined && body.lobby_ports !== null) fail('CLOUD_INVALID_CONFIG', { reason: 'give ports or lobby_ports, not both' });
  if (ports !== undefined && Object.keys(ports).length > 16) fail('VALIDATION_ERROR', { paths: 'ports-too-many' }, { errors: [{ path: ['ports-too-many'] }] });
  const token = await rc.services.auth.createNamespaceToken(authorization(rc), rc.params.game_id!, rc.params.namespace_id!, 'dev');
  return { status: 200, json: { token } };
}
