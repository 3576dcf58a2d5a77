// Build routes: create, the presigned part PUT, complete, and the admin list.
import { fail } from '../errors.js';
import { BUILD_COMPRESSIONS, BUILD_KINDS, type BuildRequest } from '../services/builds.js';
import { GAME_ID, isUuid } from '../services/ids.js';
import type { BuildRow } from '../stores/store.js';
import type { Reply, RequestContext } from './context.js';
import {
  authorization,
  declaredLength,
  optBoolean,
  optEnum,
  optString,
  origin,
  readJson,
  reqInteger,
  reqString,
  type JsonObject,
} from './request.js';

/** The shape of a create body (API_BAD_BODY); the service checks the values. */
function buildRequest(body: JsonObject): BuildRequest {
  const displayName = reqString(body, 'display_name');
  const imageTag = reqString(body, 'image_tag');
  const imageFile = body.image_file;
  if (typeof imageFile !== 'object' || imageFile === null || Array.isArray(imageFile))
    fail('API_BAD_BODY', { reason: 'image_file is required and must be an object.' });
  const file = imageFile as JsonObject;
  const path = reqString(file, 'path');
  const contentType = optString(file, 'content_type') ?? null;
  const contentLength = reqInteger(file, 'content_length');
  if (contentLength < 0) fail('API_BAD_BODY', { reason: 'image_file.content_length must not be negative.' });
  // The flag is accepted and ignored, as production has done since late 2024.
  optBoolean(body, 'multipart_upload');
  const kind = optEnum(body, 'kind', BUILD_KINDS) ?? 'docker_image';
  const compression = optEnum(body, 'compression', BUILD_COMPRESSIONS) ?? 'none';
  return { displayName, imageTag, kind, compression, path, contentType, contentLength };
}

export async function createBuild(rc: RequestContext): Promise<Reply> {
  const gameId = rc.params.game_id!;
  await rc.services.auth.cloud(authorization(rc), gameId);
  const request = buildRequest(await readJson(rc));
  const created = await rc.services.builds.create(gameId, request, origin(rc));
  return {
    status: 200,
    json: { build_id: created.buildId, upload_id: created.uploadId, image_presigned_requests: created.requests },
  };
}

/** PUT /_upload/{upload_id}/{part}: S3-like; no token, the presigned signature instead. */
export async function putPart(rc: RequestContext): Promise<Reply> {
  const { builds } = rc.services;
  const uploadId = rc.params.upload_id!;
  const n = Number(rc.params.part_number);
  // Anything refused before reading the body closes the connection instead of draining up to 100 MiB.
  rc.res.setHeader('connection', 'close');
  const expected = await builds.acceptPart(uploadId, n, rc.path, rc.query);
  const length = declaredLength(rc, 'UPLOAD_INVALID');
  if (length !== expected)
    fail('UPLOAD_INVALID', { reason: `part ${n} must be ${expected} bytes; Content-Length says ${length}.` }, { part_number: n });
  rc.res.removeHeader('connection');
  const sha256 = await builds.writePart(uploadId, n, expected, rc.req);
  return { status: 200, headers: { etag: `"${sha256}"` }, body: '' };
}

/** POST /cloud/uploads/{upload_id}/complete: 200 `{}` as the real server answers (the spec says 204). */
export async function completeUpload(rc: RequestContext): Promise<Reply> {
  const game = await rc.services.auth.cloud(authorization(rc), undefined);
  await readJson(rc, { emptyIsObject: true });
  await rc.services.builds.complete(game.gameId, rc.params.upload_id!);
  return { status: 200, json: {} };
}

export function buildView(b: BuildRow): JsonObject {
  return {
    build_id: b.build_id,
    image_tag: b.image_tag,
    display_name: b.display_name,
    kind: b.kind,
    compression: b.compression,
    content_length: b.content_length,
    sha256: b.sha256,
    complete: b.complete === 1,
    create_ts: new Date(b.create_ts).toISOString(),
  };
}

/** GET /cloud/games/{game_id}/builds (listGameBuilds): the game's builds, newest first; the image tag in `tags`. */
export async function listGameBuilds(rc: RequestContext): Promise<Reply> {
  const gameId = rc.params.game_id!;
  await rc.services.auth.cloud(authorization(rc), gameId);
  const builds = await rc.services.builds.list(gameId.toLowerCase());
  return {
    status: 200,
    json: {
      builds: builds.map((b) => ({
        build_id: b.build_id,
        upload_id: b.upload_id,
        display_name: b.display_name,
        create_ts: new Date(b.create_ts).toISOString(),
        content_length: b.content_length,
        complete: b.complete === 1,
        tags: { image_tag: b.image_tag },
      })),
    },
  };
}

/** GET /_emulator/builds[?game_id=<id>]: the builds of a game (default the seeded one), newest first. */
export async function adminListBuilds(rc: RequestContext): Promise<Reply> {
  const gameId = rc.query.get('game_id') ?? GAME_ID;
  if (!isUuid(gameId)) fail('API_BAD_QUERY_PARAMETER', { name: 'game_id', reason: `"${gameId}" is not a UUID.` });
  if ((await rc.services.games.live(gameId.toLowerCase())) === undefined) fail('API_NOT_FOUND', { what: `Game ${gameId}` });
  return { status: 200, json: { builds: (await rc.services.builds.list(gameId.toLowerCase())).map(buildView) } };
}

/** DELETE /_emulator/builds/{build_id}: the build's records and bytes, on every store. */
export async function adminDeleteBuild(rc: RequestContext): Promise<Reply> {
  const buildId = rc.params.build_id!;
  if (!isUuid(buildId)) fail('API_NOT_FOUND', { what: `Build ${buildId}` });
  const removed = await rc.services.builds.delete(buildId.toLowerCase());
  return { status: 200, json: { build_id: removed.build_id, game_id: removed.game_id } };
}
